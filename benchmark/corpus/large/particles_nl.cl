// Family particles_nl: short-range particle interactions through a neighbour list (each particle reads the
// positions of `m` neighbours named by an index table: a gather whose locality depends on the table),
// with a cut-off branch, and an all-pairs Lennard-Jones energy with a long inner loop.

// clperf: --global n --local 128 --arg n=262144 --arg m=32 --arg pos=n --arg nbr=n*m --arg force=n --arg cut2=0.02 --fill nbr=range:0:n
// clperf-sweep: n=65536..2097152 m=8..64 local=32..512
__kernel void pn_lj_list(__global const float4 *pos, __global const int *nbr, __global float4 *force,
                         int m, float cut2, int n)
{
    int i = get_global_id(0);
    if (i >= n)
        return;
    float4 p = pos[i];
    float3 f = (float3)(0.0f);
    for (int k = 0; k < m; ++k) {
        float4 q = pos[nbr[i * m + k]];
        float3 d = p.xyz - q.xyz;
        float r2 = dot(d, d) + 1e-6f;
        if (r2 < cut2) {
            float s2 = 0.0001f / r2, s6 = s2 * s2 * s2;
            f += d * (24.0f * s6 * (2.0f * s6 - 1.0f) / r2);
        }
    }
    force[i] = (float4)(f, 0.0f);
}

// The neighbour table stored neighbour-major (nbr[k * n + i]): consecutive items read consecutive entries.
// clperf: --global n --local 128 --arg n=262144 --arg m=32 --arg pos=n --arg nbr=n*m --arg force=n --arg cut2=0.02 --fill nbr=range:0:n
// clperf-sweep: n=65536..2097152 m=8..64 local=32..512
__kernel void pn_lj_list_t(__global const float4 *pos, __global const int *nbr, __global float4 *force,
                           int m, float cut2, int n)
{
    int i = get_global_id(0);
    if (i >= n)
        return;
    float4 p = pos[i];
    float3 f = (float3)(0.0f);
    for (int k = 0; k < m; ++k) {
        float4 q = pos[nbr[k * n + i]];
        float3 d = p.xyz - q.xyz;
        float r2 = dot(d, d) + 1e-6f;
        if (r2 < cut2) {
            float s2 = 0.0001f / r2, s6 = s2 * s2 * s2;
            f += d * (24.0f * s6 * (2.0f * s6 - 1.0f) / r2);
        }
    }
    force[i] = (float4)(f, 0.0f);
}

// All-pairs energy per particle, structure of arrays, a loop over every other particle.
// clperf: --global n --local 256 --arg n=16384 --arg x=n --arg y=n --arg z=n --arg e=n
// clperf-sweep: n=8192..131072 local=64..1024
__kernel void pn_lj_allpairs(__global const float *x, __global const float *y, __global const float *z,
                             __global float *e, int n)
{
    int i = get_global_id(0);
    float xi = x[i], yi = y[i], zi = z[i], acc = 0.0f;
    for (int j = 0; j < n; ++j) {
        float dx = xi - x[j], dy = yi - y[j], dz = zi - z[j];
        float r2 = dx * dx + dy * dy + dz * dz + 1e-4f;
        float s6 = native_recip(r2 * r2 * r2) * 1e-12f;
        acc += s6 * (s6 - 1.0f);
    }
    e[i] = acc;
}
