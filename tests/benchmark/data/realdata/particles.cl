// An array of structs: members of several sizes, a char before a float (3 bytes of padding), float4
// members (16-byte alignment, so the struct takes 48 bytes with its tail padding); a struct passed by
// value carries the time step.

typedef struct {
    float4 pos;
    float4 vel;
    char tag;
    float mass;
    int cell;
    short flags;
} particle_t;

typedef struct {
    float dt;
    int steps;
} step_t;

__kernel void advance(__global particle_t* p, __global float* energy, __global int* cell_of, step_t s,
                      int n) {
    int i = get_global_id(0);
    if (i >= n) return;
    particle_t q = p[i];
    q.pos += q.vel * s.dt;
    p[i] = q;
    energy[i] = 0.5f * q.mass * dot(q.vel, q.vel);
    cell_of[i] = q.cell * 2 + q.tag + q.flags + s.steps;
}
