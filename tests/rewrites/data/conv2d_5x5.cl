// 5x5 convolution over the whole image, skipping taps outside it (edges handled inside the loops).
#define KR 2
// clperf: --global 24,24 --local 8,8 --arg width=23 --arg height=21 --arg src=483 --arg k=25 --arg dst=483
__kernel void conv5(__global const float* src, __global const float* k, __global float* dst,
                    int width, int height) {
    int x = get_global_id(0);
    int y = get_global_id(1);
    if (x >= width || y >= height) return;
    float acc = 0.0f;
    for (int dy = -KR; dy <= KR; dy++) {
        for (int dx = -KR; dx <= KR; dx++) {
            int sx = x + dx;
            int sy = y + dy;
            if (sx >= 0 && sx < width && sy >= 0 && sy < height) {
                acc += k[(dy + KR) * 5 + dx + KR] * src[sy * width + sx];
            }
        }
    }
    dst[y * width + x] = acc;
}
