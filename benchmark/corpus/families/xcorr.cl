// Family xcorr: cross-correlation of two signals over a range of lags: one lag per work-item (long dot
// products), one lag per work-group with a __local reduction, and a normalised correlation of a
// 64-sample window at every position.

#define MAX_WG 1024

// clperf: --global lags --local 64 --arg lags=1024 --arg n=65536 --arg a=n+lags --arg b=n --arg out=lags
// clperf-sweep: lags=64..4096 n=1024..262144 local=16..1024
__kernel void xc_lag_item(__global const float *a, __global const float *b, __global float *out, int n, int lags)
{
    int l = get_global_id(0);
    if (l >= lags)
        return;
    float acc = 0.0f;
    for (int i = 0; i < n; ++i)
        acc += a[i + l] * b[i];
    out[l] = acc;
}

// clperf: --global lags*64 --local 64 --arg lags=1024 --arg n=65536 --arg a=n+lags --arg b=n --arg out=lags
// clperf-sweep: lags=64..4096 n=1024..262144
__kernel __attribute__((reqd_work_group_size(64, 1, 1)))
void xc_lag_group(__global const float *a, __global const float *b, __global float *out, int n, int lags)
{
    __local float s[64];
    int l = get_group_id(0), lid = get_local_id(0);
    float acc = 0.0f;
    for (int i = lid; i < n; i += 64)
        acc += a[i + l] * b[i];
    s[lid] = acc;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int d = 32; d > 0; d >>= 1) {
        if (lid < d)
            s[lid] += s[lid + d];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (lid == 0)
        out[l] = s[0];
}

// Normalised cross-correlation of short windows: out[l] over a window of 64 samples at each position.
// clperf: --global n --local 256 --arg n=262144 --arg a=n+64 --arg b=n+64 --arg out=n
// clperf-sweep: n=1024..2097152 local=16..1024
__kernel void xc_window64(__global const float *a, __global const float *b, __global float *out, int n)
{
    int p = get_global_id(0);
    if (p >= n)
        return;
    float sab = 0.0f, saa = 0.0f, sbb = 0.0f;
    for (int k = 0; k < 64; ++k) {
        float x = a[p + k], y = b[p + k];
        sab += x * y;
        saa += x * x;
        sbb += y * y;
    }
    out[p] = sab * rsqrt(saa * sbb + 1e-12f);
}
