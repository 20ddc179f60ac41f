// Family image_sobel: Sobel edge magnitude on float and uchar images, with a 1-D launch variant and a
// 16x16 __local tile.

// clperf: --global w,h --local 16,16 --arg w=1024 --arg h=1024 --arg out=w*h --arg in=w*h
// clperf-sweep: w=32..2048 h=32..2048 local=16..64
__kernel void sobel_float(__global float *out, __global const float *in, int w, int h)
{
    int x = get_global_id(0), y = get_global_id(1);
    if (x < 1 || y < 1 || x >= w - 1 || y >= h - 1) {
        out[y * w + x] = 0.0f;
        return;
    }
    int c = y * w + x;
    float gx = -in[c - w - 1] - 2.0f * in[c - 1] - in[c + w - 1] + in[c - w + 1] + 2.0f * in[c + 1] + in[c + w + 1];
    float gy = -in[c - w - 1] - 2.0f * in[c - w] - in[c - w + 1] + in[c + w - 1] + 2.0f * in[c + w] + in[c + w + 1];
    out[c] = sqrt(gx * gx + gy * gy);
}

// clperf: --global w,h --local 16,16 --arg w=1024 --arg h=1024 --arg out=w*h --arg in=w*h
// clperf-sweep: w=64..2048 h=64..2048 local=16..64
__kernel void sobel_uchar(__global uchar *out, __global const uchar *in, int w, int h)
{
    int x = get_global_id(0), y = get_global_id(1);
    int xm = max(x - 1, 0), xp = min(x + 1, w - 1), ym = max(y - 1, 0), yp = min(y + 1, h - 1);
    int gx = -in[ym * w + xm] - 2 * in[y * w + xm] - in[yp * w + xm] + in[ym * w + xp] + 2 * in[y * w + xp] + in[yp * w + xp];
    int gy = -in[ym * w + xm] - 2 * in[ym * w + x] - in[ym * w + xp] + in[yp * w + xm] + 2 * in[yp * w + x] + in[yp * w + xp];
    out[y * w + x] = (uchar)min((int)(abs(gx) + abs(gy)), 255);
}

// clperf: --global w*h --local 256 --arg w=1024 --arg h=1024 --arg out=w*h --arg in=w*h
// clperf-sweep: w=32..2048 h=32..2048 local=16..1024
__kernel void sobel_flat(__global float *out, __global const float *in, int w, int h)
{
    int c = get_global_id(0);
    int x = c % w, y = c / w;
    if (x < 1 || y < 1 || x >= w - 1 || y >= h - 1)
        return;
    float gx = in[c - w + 1] + 2.0f * in[c + 1] + in[c + w + 1] - in[c - w - 1] - 2.0f * in[c - 1] - in[c + w - 1];
    float gy = in[c + w - 1] + 2.0f * in[c + w] + in[c + w + 1] - in[c - w - 1] - 2.0f * in[c - w] - in[c - w + 1];
    out[c] = fabs(gx) + fabs(gy);
}

// clperf: --global w,h --local 16,16 --arg w=1024 --arg h=1024 --arg out=w*h --arg in=w*h
// clperf-sweep: w=32..2048 h=32..2048
__kernel __attribute__((reqd_work_group_size(16, 16, 1)))
void sobel_tiled(__global float *out, __global const float *in, int w, int h)
{
    __local float t[18][18];
    int lx = get_local_id(0), ly = get_local_id(1);
    int x0 = get_group_id(0) * 16 - 1, y0 = get_group_id(1) * 16 - 1;
    for (int j = ly * 16 + lx; j < 324; j += 256) {
        int gx = clamp(x0 + j % 18, 0, w - 1), gy = clamp(y0 + j / 18, 0, h - 1);
        t[j / 18][j % 18] = in[gy * w + gx];
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    int a = ly + 1, b = lx + 1;
    float gx = t[a - 1][b + 1] + 2.0f * t[a][b + 1] + t[a + 1][b + 1] - t[a - 1][b - 1] - 2.0f * t[a][b - 1] - t[a + 1][b - 1];
    float gy = t[a + 1][b - 1] + 2.0f * t[a + 1][b] + t[a + 1][b + 1] - t[a - 1][b - 1] - 2.0f * t[a - 1][b] - t[a - 1][b + 1];
    out[get_global_id(1) * w + get_global_id(0)] = sqrt(gx * gx + gy * gy);
}
