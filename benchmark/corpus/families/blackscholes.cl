// Family blackscholes: European option pricing, a math-heavy map (exp, log, sqrt, erf-style polynomial):
// float with a polynomial normal CDF, float with erfc, a float4 version, and double precision.
#pragma OPENCL EXTENSION cl_khr_fp64 : enable

inline float cnd_poly(float d)
{
    const float a1 = 0.31938153f, a2 = -0.356563782f, a3 = 1.781477937f, a4 = -1.821255978f, a5 = 1.330274429f;
    float k = 1.0f / (1.0f + 0.2316419f * fabs(d));
    float c = 0.39894228040f * exp(-0.5f * d * d) * (k * (a1 + k * (a2 + k * (a3 + k * (a4 + k * a5)))));
    return d > 0 ? 1.0f - c : c;
}

// clperf: --global n --local 256 --arg n=1048576 --arg call=n --arg put=n --arg s=n --arg x=n --arg t=n --arg r=0.02 --arg v=0.3
// clperf-sweep: n=1024..4194304 local=16..1024
__kernel void bs_poly(__global float *call, __global float *put, __global const float *s, __global const float *x,
                      __global const float *t, float r, float v, int n)
{
    int i = get_global_id(0);
    if (i >= n)
        return;
    float S = s[i] * 100.0f + 5.0f, X = x[i] * 100.0f + 1.0f, T = t[i] * 10.0f + 0.25f;
    float sq = sqrt(T);
    float d1 = (log(S / X) + (r + 0.5f * v * v) * T) / (v * sq);
    float d2 = d1 - v * sq;
    float e = exp(-r * T);
    call[i] = S * cnd_poly(d1) - X * e * cnd_poly(d2);
    put[i] = X * e * cnd_poly(-d2) - S * cnd_poly(-d1);
}

// clperf: --global n --local 128 --arg n=1048576 --arg call=n --arg s=n --arg x=n --arg t=n --arg r=0.02 --arg v=0.3
// clperf-sweep: n=1024..4194304 local=16..1024
__kernel void bs_erfc(__global float *call, __global const float *s, __global const float *x, __global const float *t,
                      float r, float v, int n)
{
    int i = get_global_id(0);
    if (i >= n)
        return;
    float S = s[i] * 100.0f + 5.0f, X = x[i] * 100.0f + 1.0f, T = t[i] * 10.0f + 0.25f;
    float sq = sqrt(T);
    float d1 = (log(S / X) + (r + 0.5f * v * v) * T) / (v * sq);
    float d2 = d1 - v * sq;
    call[i] = S * 0.5f * erfc(-d1 * M_SQRT1_2_F) - X * exp(-r * T) * 0.5f * erfc(-d2 * M_SQRT1_2_F);
}

// clperf: --global n --local 64 --arg n=262144 --arg call=n --arg s=n --arg x=n --arg t=n --arg r=0.02 --arg v=0.3
// clperf-sweep: n=256..1048576 local=16..1024
__kernel void bs_float4(__global float4 *call, __global const float4 *s, __global const float4 *x,
                        __global const float4 *t, float r, float v, int n)
{
    int i = get_global_id(0);
    if (i >= n)
        return;
    float4 S = s[i] * 100.0f + 5.0f, X = x[i] * 100.0f + 1.0f, T = t[i] * 10.0f + 0.25f;
    float4 sq = sqrt(T);
    float4 d1 = (log(S / X) + (r + 0.5f * v * v) * T) / (v * sq);
    float4 d2 = d1 - v * sq;
    call[i] = S * 0.5f * erfc(-d1 * M_SQRT1_2_F) - X * exp(-r * T) * 0.5f * erfc(-d2 * M_SQRT1_2_F);
}

// clperf: --global n --local 128 --arg n=524288 --arg call=n --arg s=n --arg x=n --arg t=n --arg r=0.02 --arg v=0.3
// clperf-sweep: n=512..2097152 local=16..1024
__kernel void bs_double(__global double *call, __global const double *s, __global const double *x,
                        __global const double *t, double r, double v, int n)
{
    int i = get_global_id(0);
    if (i >= n)
        return;
    double S = s[i] * 100.0 + 5.0, X = x[i] * 100.0 + 1.0, T = t[i] * 10.0 + 0.25;
    double sq = sqrt(T);
    double d1 = (log(S / X) + (r + 0.5 * v * v) * T) / (v * sq);
    double d2 = d1 - v * sq;
    call[i] = S * 0.5 * erfc(-d1 * M_SQRT1_2) - X * exp(-r * T) * 0.5 * erfc(-d2 * M_SQRT1_2);
}
