/* flg_math: the arithmetic operators (x + y, feedline.math.*) elementwise over broadcast
 * operands, with the CPU kernels' semantics: integers wrap, C-style integer // and %, integer
 * division by zero is an error (reported through *error), integer pow with a negative exponent
 * gives 0, min/max pick `a < b ? a : b` on floats, clamp propagates NaN, shifts outside
 * [0, bits) give 0 (or -1 for negative values shifted right), float16 computes in float32. */
#include "flg_common.cuh"

/* Operator numbers: the order of OPS in feedline/operators/gpu/math_ops.py. */
enum {
    OP_ADD, OP_SUB, OP_MUL, OP_TRUEDIV, OP_FLOORDIV, OP_MOD, OP_POW, OP_MIN, OP_MAX, OP_ATAN2,
    OP_FPOW, OP_BITAND, OP_BITOR, OP_BITXOR, OP_LSHIFT, OP_RSHIFT, OP_EQ, OP_NE, OP_LT, OP_LE,
    OP_GT, OP_GE, OP_NEG, OP_ABS, OP_BITNOT, OP_FABS, OP_FLOOR, OP_CEIL, OP_SQRT, OP_RSQRT,
    OP_CBRT, OP_EXP, OP_LOG, OP_LOG2, OP_LOG10, OP_SIN, OP_COS, OP_TAN, OP_ASIN, OP_ACOS,
    OP_ATAN, OP_SINH, OP_COSH, OP_TANH, OP_ASINH, OP_ACOSH, OP_ATANH, OP_CLAMP, OP_COUNT
};

/* The arithmetic type: float for float16 (NumPy computes half in float32), else T. */
template <class T> struct flg_work { typedef T type; };
template <> struct flg_work<flg_half> { typedef float type; };

template <class W> FLG_HD W flg_nan_max(W a, W b) { return a != a || a > b ? a : b; }
template <class W> FLG_HD W flg_nan_min(W a, W b) { return a != a || a < b ? a : b; }

template <class W> FLG_HD W flg_float_unary(int op, W x) {
    switch (op) {
        case OP_FABS: return fabs(x);
        case OP_FLOOR: return floor(x);
        case OP_CEIL: return ceil(x);
        case OP_SQRT: return sqrt(x);
        case OP_RSQRT: return W(1) / sqrt(x);
        case OP_CBRT: return cbrt(x);
        case OP_EXP: return exp(x);
        case OP_LOG: return log(x);
        case OP_LOG2: return log2(x);
        case OP_LOG10: return log10(x);
        case OP_SIN: return sin(x);
        case OP_COS: return cos(x);
        case OP_TAN: return tan(x);
        case OP_ASIN: return asin(x);
        case OP_ACOS: return acos(x);
        case OP_ATAN: return atan(x);
        case OP_SINH: return sinh(x);
        case OP_COSH: return cosh(x);
        case OP_TANH: return tanh(x);
        case OP_ASINH: return asinh(x);
        case OP_ACOSH: return acosh(x);
        default: return atanh(x);
    }
}

/* Integer power by squaring, wrapping as NumPy's does; a negative signed exponent gives 0. */
template <class T> FLG_HD T flg_ipow(T base, T exponent) {
    if (exponent < T(0)) return T(0);
    typedef typename std::make_unsigned<T>::type U;
    U result = 1, b = (U)base;
    for (U e = (U)exponent; e; e >>= 1) {
        if (e & 1) result = (U)(result * b);
        b = (U)(b * b);
    }
    return (T)result;
}

template <class T> FLG_HD T flg_lshift(T a, T b) {
    typedef typename std::make_unsigned<T>::type U;
    return (uint64_t)(U)b < 8 * sizeof(T) && !(b < T(0)) ? (T)((U)a << (U)b) : T(0);
}

template <class T> FLG_HD T flg_rshift(T a, T b) {
    if ((uint64_t)b < 8 * sizeof(T) && !(b < T(0))) return (T)(a >> b);
    return a < T(0) ? T(-1) : T(0);
}

/* Integer operators; bool behaves as NumPy's (+ is or, * is and). */
template <class T> FLG_HD T flg_int_op(int op, T a, T b, T c, int *error) {
    if constexpr (std::is_same<T, bool>::value) {
        switch (op) {
            case OP_ADD: case OP_BITOR: case OP_MAX: return a || b;
            case OP_MUL: case OP_BITAND: case OP_MIN: return a && b;
            case OP_BITXOR: return a != b;
            case OP_BITNOT: return !a;
            case OP_ABS: return a;
            case OP_CLAMP: return (a || b) && c;
            default: return a;
        }
    } else {
        typedef typename std::make_unsigned<T>::type U;
        switch (op) {
            case OP_ADD: return (T)(U)((U)a + (U)b);
            case OP_SUB: return (T)(U)((U)a - (U)b);
            case OP_MUL: return (T)(U)((U)a * (U)b);
            case OP_FLOORDIV:
            case OP_MOD:
                if (b == T(0)) {
                    FLG_ATOMIC_OR(error, 1);
                    return T(0);
                }
                if (flg_traits<T>::is_signed && b == T(-1))
                    return op == OP_MOD ? T(0) : (T)(U)(U(0) - (U)a);
                return op == OP_MOD ? (T)(a % b) : (T)(a / b);
            case OP_POW: return flg_ipow(a, b);
            case OP_MIN: return a < b ? a : b;
            case OP_MAX: return a > b ? a : b;
            case OP_BITAND: return a & b;
            case OP_BITOR: return a | b;
            case OP_BITXOR: return a ^ b;
            case OP_LSHIFT: return flg_lshift(a, b);
            case OP_RSHIFT: return flg_rshift(a, b);
            case OP_NEG: return (T)(U)(U(0) - (U)a);
            case OP_ABS: return a < T(0) ? (T)(U)(U(0) - (U)a) : a;
            case OP_BITNOT: return (T)~a;
            default: { /* clamp */
                const T low = a > b ? a : b;
                return low < c ? low : c;
            }
        }
    }
}

template <class W> FLG_HD W flg_float_op(int op, W a, W b, W c) {
    switch (op) {
        case OP_ADD: return a + b;
        case OP_SUB: return a - b;
        case OP_MUL: return a * b;
        case OP_TRUEDIV: case OP_FLOORDIV: return a / b;
        case OP_MOD: return fmod(a, b);
        case OP_POW: case OP_FPOW: return pow(a, b);
        case OP_MIN: return a < b ? a : b;
        case OP_MAX: return a > b ? a : b;
        case OP_ATAN2: return atan2(a, b);
        case OP_NEG: return -a;
        case OP_ABS: return fabs(a);
        case OP_CLAMP: return flg_nan_min(flg_nan_max(a, b), c);
        default: return flg_float_unary(op, a);
    }
}

template <class W> FLG_HD bool flg_compare(int op, W a, W b) {
    switch (op) {
        case OP_EQ: return a == b;
        case OP_NE: return a != b;
        case OP_LT: return a < b;
        case OP_LE: return a <= b;
        case OP_GT: return a > b;
        default: return a >= b;
    }
}

template <class T>
__global__ void flg_math_kernel(int op, int arity, int ndim, const int64_t *desc,
                                const void *const *operands, void *const *outputs, int *error) {
    typedef typename flg_work<T>::type W;
    const int sample = blockIdx.y;
    const int64_t *d = desc + (int64_t)sample * FLG_MATH_DESC;
    int64_t count = 1;
    for (int a = 0; a < ndim; ++a) count *= d[a];
    const T *x[3];
    for (int k = 0; k < arity; ++k) x[k] = (const T *)operands[sample * arity + k];
    FLG_FOR_EACH(index, count) {
        int64_t rest = index, at[3] = {0, 0, 0};
        for (int a = ndim - 1; a >= 0; --a) {
            const int64_t o = rest % d[a];
            rest /= d[a];
            for (int k = 0; k < arity; ++k) at[k] += o * d[6 * (k + 1) + a];
        }
        const W a = (W)x[0][at[0]];
        const W b = arity > 1 ? (W)x[1][at[1]] : W(0);
        const W c = arity > 2 ? (W)x[2][at[2]] : W(0);
        if (op >= OP_EQ && op <= OP_GE) {
            ((bool *)outputs[sample])[index] = flg_compare(op, a, b);
        } else if constexpr (flg_traits<T>::is_float) {
            ((T *)outputs[sample])[index] = (T)flg_float_op(op, a, b, c);
        } else {
            ((T *)outputs[sample])[index] = flg_int_op<T>(op, a, b, c, error);
        }
    }
}

extern "C" int flg_math(int op, int type, int arity, int ndim, int samples,
                        int64_t max_elements, const int64_t *desc, const void *const *operands,
                        void *const *outputs, int *error, void *stream) {
    if (op < 0 || op >= OP_COUNT || arity < 1 || arity > 3 || ndim < 0 || ndim > FLG_MAX_DIMS)
        return FLG_BAD_ARGUMENT;
    if (samples == 0 || max_elements == 0) return 0;
    return flg_dispatch(type, [&](auto tag) {
        typedef typename decltype(tag)::type T;
        FLG_LAUNCH(flg_math_kernel<T>, flg_grid(max_elements, samples), dim3(FLG_BLOCK), stream,
                   op, arity, ndim, desc, operands, outputs, error);
        return FLG_STATUS();
    });
}
