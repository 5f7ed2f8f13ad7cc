# The experiment build of scripts/gpu-profile.sh and scripts/gpu-variants.sh
# (sourced, with ROOT set): BUILD is build-gpu-exp/, and build_gpu_exp LOG
# builds the library there with the experiment knobs compiled in
# (-DINFINIOP_CUDA_EXPERIMENTS=ON; sm_90 unless INFINIOP_CUDA_ARCH says),
# writing the configure and build output to LOG; nonzero when either fails.
BUILD=$ROOT/build-gpu-exp
build_gpu_exp() {
  local gen=()
  command -v ninja >/dev/null 2>&1 && gen=(-G Ninja)
  cmake -S "$ROOT" -B "$BUILD" "${gen[@]}" -DCMAKE_BUILD_TYPE=Release -DINFINIOP_CUDA=ON \
    -DINFINIOP_CUDA_EXPERIMENTS=ON -DCMAKE_CUDA_ARCHITECTURES="${INFINIOP_CUDA_ARCH:-90}" \
    -DINFINIOP_BUILD_BENCH=OFF -DBUILD_TESTING=OFF >"$1" 2>&1 &&
    cmake --build "$BUILD" -j "$(nproc)" --target infiniop infinirt >>"$1" 2>&1
}
