// Family nbody: all-pairs gravitational accelerations. Naive (every body reads every other from global
// memory), tiled through __local memory (any power-of-two work-group size up to 1024), structure-of-arrays
// layout, and an unrolled inner loop.

#define SOFT 0.01f
#define MAX_WG 1024

// clperf: --global n --local 256 --arg n=4096 --arg pos=n --arg acc=n
// clperf-sweep: n=1024..16384 local=16..1024
__kernel void nb_naive(__global const float4 *pos, __global float4 *acc, int n)
{
    int i = get_global_id(0);
    float4 p = pos[i];
    float3 a = (float3)(0.0f);
    for (int j = 0; j < n; ++j) {
        float4 q = pos[j];
        float3 d = q.xyz - p.xyz;
        float r2 = dot(d, d) + SOFT;
        float inv = rsqrt(r2);
        a += d * (q.w * inv * inv * inv);
    }
    acc[i] = (float4)(a, 0.0f);
}

// clperf: --global n --local 256 --arg n=4096 --arg pos=n --arg acc=n
// clperf-sweep: n=1024..16384 local=16..1024
__kernel void nb_tiled(__global const float4 *pos, __global float4 *acc, int n)
{
    __local float4 tile[MAX_WG];
    int i = get_global_id(0), lid = get_local_id(0), ls = get_local_size(0);
    float4 p = pos[i];
    float3 a = (float3)(0.0f);
    for (int base = 0; base < n; base += ls) {
        tile[lid] = pos[base + lid];
        barrier(CLK_LOCAL_MEM_FENCE);
        for (int j = 0; j < ls; ++j) {
            float4 q = tile[j];
            float3 d = q.xyz - p.xyz;
            float r2 = dot(d, d) + SOFT;
            float inv = rsqrt(r2);
            a += d * (q.w * inv * inv * inv);
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    acc[i] = (float4)(a, 0.0f);
}

// clperf: --global n --local 128 --arg n=4096 --arg x=n --arg y=n --arg z=n --arg m=n --arg ax=n --arg ay=n --arg az=n
// clperf-sweep: n=1024..16384 local=16..1024
__kernel void nb_soa(__global const float *x, __global const float *y, __global const float *z,
                     __global const float *m, __global float *ax, __global float *ay, __global float *az, int n)
{
    int i = get_global_id(0);
    float px = x[i], py = y[i], pz = z[i];
    float sx = 0.0f, sy = 0.0f, sz = 0.0f;
    for (int j = 0; j < n; ++j) {
        float dx = x[j] - px, dy = y[j] - py, dz = z[j] - pz;
        float r2 = dx * dx + dy * dy + dz * dz + SOFT;
        float s = m[j] * native_rsqrt(r2 * r2 * r2);
        sx += dx * s; sy += dy * s; sz += dz * s;
    }
    ax[i] = sx; ay[i] = sy; az[i] = sz;
}

// clperf: --global n --local 128 --arg n=4096 --arg pos=n --arg acc=n
// clperf-sweep: n=1024..16384 local=16..1024
__kernel void nb_unroll4(__global const float4 *pos, __global float4 *acc, int n)
{
    int i = get_global_id(0);
    float4 p = pos[i];
    float3 a = (float3)(0.0f);
#pragma unroll 4
    for (int j = 0; j < n; ++j) {
        float4 q = pos[j];
        float3 d = q.xyz - p.xyz;
        float inv = rsqrt(dot(d, d) + SOFT);
        a += d * (q.w * inv * inv * inv);
    }
    acc[i] = (float4)(a, 0.0f);
}

// Double precision naive n-body.
// clperf: --global n --local 128 --arg n=2048 --arg pos=n --arg acc=n
// clperf-sweep: n=256..8192 local=16..1024
__kernel void nb_double(__global const double4 *pos, __global double4 *acc, int n)
{
    int i = get_global_id(0);
    double4 p = pos[i];
    double3 a = (double3)(0.0);
    for (int j = 0; j < n; ++j) {
        double4 q = pos[j];
        double3 d = q.xyz - p.xyz;
        double inv = rsqrt(dot(d, d) + 0.01);
        a += d * (q.w * inv * inv * inv);
    }
    acc[i] = (double4)(a, 0.0);
}
