// A matrix product written the way public benchmark suites write theirs: the element type and the
// index type are typedefs (REAL may be redefined with -DREAL=double), so only the compiler knows them.

#ifndef REAL
#define REAL float
#endif
typedef REAL DATA_TYPE;
typedef int INDEX_T;

// clperf: --global n,n --local 8,8 --arg n=64 --arg A=n*n --arg B=n*n --arg C=n*n
__kernel void matmul(__global const DATA_TYPE* A, __global const DATA_TYPE* B, __global DATA_TYPE* C,
                     INDEX_T n, DATA_TYPE alpha) {
    INDEX_T col = get_global_id(0), row = get_global_id(1);
    DATA_TYPE acc = 0;
    for (INDEX_T k = 0; k < n; ++k)
        acc += A[row * n + k] * B[k * n + col];
    C[row * n + col] = alpha * acc;
}
