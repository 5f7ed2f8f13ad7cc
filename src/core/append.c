/*
 * core/append.c - infiniop_append (core/create.h): bounded appends to the
 * verbose line's buffer. A file of its own, with no other dependency, so
 * that programs built from backend sources alone (tests/test_vec) link the
 * backends' describe functions without the rest of core.
 */
#include "create.h"

#include <stdarg.h>
#include <stdio.h>

void infiniop_append(char *buf, size_t n, size_t *len, const char *fmt, ...) {
    if (*len >= n) return;
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(buf + *len, n - *len, fmt, ap);
    va_end(ap);
    if (k > 0) *len += (size_t)k;
}
