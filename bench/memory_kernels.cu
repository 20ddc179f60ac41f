// Kernels whose memory traffic the memory-hierarchy model predicts from synthetic traces (validation only):
// a streaming add, a naive matrix product (one thread per C element) and a 16x16-tiled one.
#include <cstdio>
#include <cuda_runtime.h>

__global__ void stream_add(const float* a, const float* b, float* c, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) c[i] = a[i] + b[i];
}
__global__ void naive_mm(const float* a, const float* b, float* c, int n) {
    int row = blockIdx.y * 16 + threadIdx.y, col = blockIdx.x * 16 + threadIdx.x;
    float acc = 0.f;
    for (int k = 0; k < n; ++k) acc += a[row * n + k] * b[k * n + col];
    c[row * n + col] = acc;
}
__global__ void tiled_mm(const float* a, const float* b, float* c, int n) {
    __shared__ float as[16][16], bs[16][16];
    int tx = threadIdx.x, ty = threadIdx.y;
    int row = blockIdx.y * 16 + ty, col = blockIdx.x * 16 + tx;
    float acc = 0.f;
    for (int t = 0; t < n / 16; ++t) {
        as[ty][tx] = a[row * n + t * 16 + tx];
        bs[ty][tx] = b[(t * 16 + ty) * n + col];
        __syncthreads();
        for (int k = 0; k < 16; ++k) acc += as[ty][k] * bs[k][tx];
        __syncthreads();
    }
    c[row * n + col] = acc;
}
int main() {
    const int N = 1 << 26;
    float *a, *b, *c;
    cudaMalloc(&a, N * 4); cudaMalloc(&b, N * 4); cudaMalloc(&c, N * 4);
    cudaMemset(a, 0, N * 4); cudaMemset(b, 0, N * 4);
    stream_add<<<N / 256, 256>>>(a, b, c, N);
    for (int n : {2048, 4096}) {
        dim3 grid(n / 16, n / 16), block(16, 16);
        naive_mm<<<grid, block>>>(a, b, c, n);
        tiled_mm<<<grid, block>>>(a, b, c, n);
    }
    cudaDeviceSynchronize();
    printf("%s\n", cudaGetErrorString(cudaGetLastError()));
    return 0;
}
