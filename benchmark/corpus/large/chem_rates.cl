// Family chem_rates: reaction-rate kernels of a combustion-style solver, one work-item per grid point,
// fields stored structure-of-arrays (field f of point i at f * n + i). Each point evaluates NR modified
// Arrhenius rates k = A T^b exp(-E / T) (exp and log per reaction), equilibrium ratios from a polynomial
// Gibbs fit, and net species production from the rates: compute-heavy, with many outputs a point.

#define NR 48
#define NS 16

// Coefficients of an invented mechanism: pre-exponential (log), temperature exponent, activation
// temperature, and the two species each reaction consumes and produces.
__constant float LOG_A[NR] = {
    30.1f, 28.4f, 29.7f, 31.2f, 27.9f, 30.8f, 29.3f, 28.8f, 30.5f, 29.1f, 31.0f, 28.2f,
    29.9f, 30.3f, 28.6f, 29.5f, 30.0f, 28.9f, 31.4f, 29.2f, 30.6f, 28.1f, 29.8f, 30.2f,
    28.7f, 29.4f, 30.9f, 28.3f, 29.6f, 31.1f, 28.5f, 30.4f, 29.0f, 30.7f, 28.0f, 29.3f,
    31.3f, 28.8f, 30.1f, 29.7f, 28.4f, 30.8f, 29.5f, 28.6f, 31.0f, 29.9f, 30.3f, 28.2f};
__constant float BETA[NR] = {
    0.0f, -0.5f, 1.2f, 0.3f, -1.0f, 0.8f, 2.0f, -0.2f, 0.5f, 1.5f, -0.7f, 0.0f,
    0.9f, -0.4f, 1.1f, 0.2f, -0.9f, 1.7f, 0.4f, -0.1f, 0.6f, 1.3f, -0.6f, 0.1f,
    1.9f, -0.3f, 0.7f, 1.0f, -0.8f, 0.0f, 1.4f, 0.3f, -0.5f, 1.6f, 0.2f, -1.1f,
    0.8f, 1.2f, -0.2f, 0.5f, 1.8f, -0.4f, 0.9f, 0.0f, 1.1f, -0.7f, 0.6f, 1.5f};
__constant float EACT[NR] = {
    8000.f, 3500.f, 12000.f, 500.f, 7000.f, 15000.f, 2500.f, 9000.f, 4000.f, 11000.f, 6000.f, 1000.f,
    13000.f, 5000.f, 8500.f, 3000.f, 10000.f, 7500.f, 14000.f, 2000.f, 9500.f, 4500.f, 12500.f, 1500.f,
    6500.f, 11500.f, 3800.f, 8800.f, 5200.f, 13500.f, 2700.f, 10500.f, 7200.f, 4200.f, 9800.f, 600.f,
    12200.f, 5600.f, 8200.f, 3300.f, 14500.f, 6800.f, 2300.f, 10800.f, 4800.f, 11800.f, 7800.f, 900.f};
__constant int REACT[NR] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 1, 3, 5, 7, 9, 11, 13, 15,
                            0, 2, 4, 6, 8, 10, 12, 14, 3, 6, 9, 12, 15, 2, 5, 8, 11, 14, 1, 4, 7, 10, 13, 0};
__constant int PROD[NR] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 0, 4, 6, 8, 10, 12, 14, 0, 2,
                           5, 7, 9, 11, 13, 15, 1, 3, 10, 13, 0, 3, 6, 9, 12, 15, 2, 5, 8, 11, 14, 1, 4, 7};

// Forward rates of every reaction at every point: rates[r * n + i].
// clperf: --global n --local 128 --arg n=262144 --arg T=n --arg rates=48*n
// clperf-sweep: n=65536..4194304 local=32..512
__kernel void cr_arrhenius(__global const float *T, __global float *rates, int n)
{
    int i = get_global_id(0);
    float t = 300.0f + 2000.0f * T[i];
    float logt = log(t), inv = 1.0f / t;
    for (int r = 0; r < NR; ++r)
        rates[r * n + i] = exp(LOG_A[r] + BETA[r] * logt - EACT[r] * inv);
}

// Equilibrium constants from a 5-term Gibbs polynomial per species, then reverse rates.
// clperf: --global n --local 128 --arg n=262144 --arg T=n --arg kf=48*n --arg kr=48*n --arg gibbs=16*5
// clperf-sweep: n=65536..4194304 local=32..512
__kernel void cr_reverse(__global const float *T, __global const float *kf, __global float *kr,
                         __global const float *gibbs, int n)
{
    int i = get_global_id(0);
    float t = 300.0f + 2000.0f * T[i];
    float logt = log(t);
    float g[NS];
    for (int s = 0; s < NS; ++s) {
        __global const float *c = gibbs + 5 * s;
        g[s] = c[0] * (1.0f - logt) - t * (c[1] * 0.5f + t * (c[2] / 6.0f + t * (c[3] / 12.0f))) + c[4] / t;
    }
    for (int r = 0; r < NR; ++r) {
        float dg = g[PROD[r]] - g[REACT[r]];
        kr[r * n + i] = kf[r * n + i] * exp(-fmin(dg, 60.0f));
    }
}

// Net production of every species: rate of progress q = kf c_react - kr c_prod, scattered to species.
// clperf: --global n --local 128 --arg n=262144 --arg kf=48*n --arg kr=48*n --arg conc=16*n --arg wdot=16*n
// clperf-sweep: n=65536..4194304 local=32..512
__kernel void cr_production(__global const float *kf, __global const float *kr, __global const float *conc,
                            __global float *wdot, int n)
{
    int i = get_global_id(0);
    float w[NS];
    for (int s = 0; s < NS; ++s)
        w[s] = 0.0f;
    for (int r = 0; r < NR; ++r) {
        float q = kf[r * n + i] * conc[REACT[r] * n + i] - kr[r * n + i] * conc[PROD[r] * n + i];
        w[REACT[r]] -= q;
        w[PROD[r]] += q;
    }
    for (int s = 0; s < NS; ++s)
        wdot[s * n + i] = w[s];
}

// The same rates for points stored array-of-structures (all fields of a point together).
// clperf: --global n --local 128 --arg n=262144 --arg T=n --arg rates=48*n
// clperf-sweep: n=65536..4194304 local=32..512
__kernel void cr_arrhenius_aos(__global const float *T, __global float *rates, int n)
{
    int i = get_global_id(0);
    float t = 300.0f + 2000.0f * T[i];
    float logt = log(t), inv = 1.0f / t;
    for (int r = 0; r < NR; ++r)
        rates[i * NR + r] = exp(LOG_A[r] + BETA[r] * logt - EACT[r] * inv);
}
