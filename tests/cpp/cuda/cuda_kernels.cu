#include "cuda_kernels.h"

namespace paddle_prof::testing {

namespace {
__global__ void AddOne(float* data, int n, int rounds) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  for (int r = 0; r < rounds; ++r) data[i] += 1.0f;
}
}  // namespace

void LaunchAddOne(float* device_data, int n, int rounds) {
  AddOne<<<(n + 255) / 256, 256>>>(device_data, n, rounds);
}

}  // namespace paddle_prof::testing
