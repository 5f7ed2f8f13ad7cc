/*
 * core/retire.c - a small quarantine for destroyed objects.
 *
 * Tensor descriptors, handles and operator descriptors clear their magic tag
 * when destroyed. If their memory went straight back to malloc, a later call
 * with the stale pointer would read freed memory (undefined behaviour) before
 * it could see the cleared tag. Instead the memory is retired here: it stays
 * allocated, with the tag cleared, until INFINIOP_RETIRE_SLOTS later objects
 * have been retired, and only then is freed. So a use (or a second destroy)
 * of one of the last INFINIOP_RETIRE_SLOTS destroyed objects is reliably
 * answered with BAD_PARAM; older stale pointers remain undefined behaviour,
 * as with any C library.
 *
 * Cost: one mutex acquisition per destroy; nothing on the run path.
 */
#include "common.h"

#include <pthread.h>
#include <stdlib.h>

#define INFINIOP_RETIRE_SLOTS 256

static pthread_mutex_t retire_lock = PTHREAD_MUTEX_INITIALIZER;
static void *retired[INFINIOP_RETIRE_SLOTS];
static size_t retire_next;

void infiniop_retire(void *p) {
    if (!p) return;
    pthread_mutex_lock(&retire_lock);
    void *old = retired[retire_next];
    retired[retire_next] = p;
    retire_next = (retire_next + 1) % INFINIOP_RETIRE_SLOTS;
    pthread_mutex_unlock(&retire_lock);
    free(old);
}
