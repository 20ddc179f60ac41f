#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#define TILE 16
// clperf: --global n --local 64 --arg n=4096
__kernel __attribute__((reqd_work_group_size(64, 1, 1))) void scale(__global float4 *restrict v, __local float *tmp,
                                                                  __read_only image2d_t img, const uint n)
{
    size_t i = get_global_id(0);
    tmp[get_local_id(0)] = 1.5f;
    barrier(CLK_LOCAL_MEM_FENCE);
    #pragma unroll 4
    for (int k = 0; k < 4; k++)
        v[i] = mad(v[i], (float4)(2.0f), native_exp(v[i])) + vload4(0, (__global float *)v) + 0x1Fu;
    atomic_add((__global int *)v, 1);
    /* block */ half8 h;
}
