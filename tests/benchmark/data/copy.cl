// Contiguous copies: the bandwidth they reach, as a share of the device's measured peak, says how much
// of the memory system a simple kernel gets; repeated runs of them give the noise floor.

// clperf: --global a --local 256 --arg a=16777216 --arg b=a
__kernel void copy4(__global const float4* restrict a, __global float4* restrict b) {
    size_t i = get_global_id(0);
    b[i] = a[i];
}

// clperf: --global a --local 256 --arg a=67108864 --arg b=a
__kernel void copy1(__global const float* restrict a, __global float* restrict b) {
    size_t i = get_global_id(0);
    b[i] = a[i];
}

// clperf: --global n --local 256 --arg n=1048576 --arg a=n --arg b=n --arg c=n
__kernel void vadd(__global const float* a, __global const float* b, __global float* c, int n) {
    int i = get_global_id(0);
    if (i < n) c[i] = a[i] + b[i];
}
