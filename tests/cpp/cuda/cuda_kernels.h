// A kernel for the GPU tests, built by nvcc.
#ifndef PADDLE_PROF_TESTS_CPP_CUDA_KERNELS_H_
#define PADDLE_PROF_TESTS_CPP_CUDA_KERNELS_H_

namespace paddle_prof::testing {

// Adds 1 to each of `n` floats at `device_data`, `rounds` times, on the default stream.
void LaunchAddOne(float* device_data, int n, int rounds);

}  // namespace paddle_prof::testing

#endif  // PADDLE_PROF_TESTS_CPP_CUDA_KERNELS_H_
