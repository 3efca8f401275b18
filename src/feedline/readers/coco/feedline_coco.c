/* The COCO reader's segmentation parser: polygon coordinates from their JSON text in one pass.
 *
 * A COCO annotation file is mostly polygon coordinates (tens of millions of numbers). msgspec
 * checks the whole file and hands over each segmentation's JSON text; this parser turns a run
 * of them into counts and float32 coordinates without a Python object per number.
 *
 * Numbers are converted to the nearest double, exactly as a correctly rounding parser does, and
 * then to float32. Only conversions that are provably exact are done here:
 *   - a mantissa up to 2^53 and a power of ten up to 22: one IEEE double operation on exact
 *     operands (Clinger's fast path; every number of the COCO 2017 files), where double
 *     expressions are evaluated in double precision (FL_COCO_DOUBLE_PATH);
 *   - up to 19 digits (every float Python's json writes) where long double has a 64-bit
 *     mantissa and is evaluated as such (x86, FL_COCO_LONG_DOUBLE_PATH): one long double
 *     operation, then rounding to double, unless the long double result lies exactly halfway
 *     between two doubles (about 1 in 2048), where the second rounding could differ from a
 *     single one.
 * A segmentation holding any other number is skipped (FL_COCO_SKIPPED as its polygon count),
 * and the caller parses it with a general JSON parser. It holds no state and takes no locks.
 */
#include <float.h>
#include <math.h>
#include <stdint.h>

#include "feedline_coco.h"

/* Which exact conversions this compiler's arithmetic allows. FLT_EVAL_METHOD says in which
 * precision expressions are evaluated: 0, each type in its own; 1, float in double; 2, float
 * and double in long double; 16, 32 and 64 (C23 / ISO TS 18661-3, e.g. GCC 12+ for a CPU with
 * AVX512-FP16): types narrower than _Float16/_Float32/_Float64 in that type, so double (which
 * is _Float64) and long double in their own; -1 or anything else: unknown. */
#if DBL_MANT_DIG == 53 && (FLT_EVAL_METHOD == 0 || FLT_EVAL_METHOD == 1 || \
                           FLT_EVAL_METHOD == 16 || FLT_EVAL_METHOD == 32 || FLT_EVAL_METHOD == 64)
#define FL_COCO_DOUBLE_PATH 1
#else
#define FL_COCO_DOUBLE_PATH 0
#endif
#if DBL_MANT_DIG == 53 && LDBL_MANT_DIG == 64 &&                                   \
    (FLT_EVAL_METHOD == 0 || FLT_EVAL_METHOD == 1 || FLT_EVAL_METHOD == 2 ||       \
     FLT_EVAL_METHOD == 16 || FLT_EVAL_METHOD == 32 || FLT_EVAL_METHOD == 64)
#define FL_COCO_LONG_DOUBLE_PATH 1
#else
#define FL_COCO_LONG_DOUBLE_PATH 0
#endif

/* Why a run stopped (*status), as the Python binding names them. */
enum {
    FL_COCO_OK = 0,
    FL_COCO_MALFORMED = 1, /* not a list of lists of an even count of numbers, object or null */
    FL_COCO_INEXACT = 2,   /* a number this parser does not convert exactly */
    FL_COCO_FULL = 3       /* an output buffer is too small */
};

/* polygons[i] of a segmentation that is not a list of polygons, or that holds a number this
   parser does not convert exactly (left to the caller). */
enum { FL_COCO_OBJECT = -1, FL_COCO_NULL = -2, FL_COCO_SKIPPED = -3 };

static const double kPowersOfTen[23] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                        1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
                                        1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};

static inline int is_space(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }
static inline int is_digit(char c) { return (unsigned char)(c - '0') < 10; }

static inline const char *skip_spaces(const char *p, const char *end) {
    while (p < end && is_space(*p)) p++;
    return p;
}

/* mantissa * 10^exponent as the nearest double, if it can be computed exactly here. */
static int to_double(uint64_t mantissa, int exponent, double *value) {
    if (mantissa == 0) {
        *value = 0.0;
        return FL_COCO_OK;
    }
#if FL_COCO_DOUBLE_PATH
    if (mantissa <= (UINT64_C(1) << 53) && exponent >= -22 && exponent <= 22) {
        double m = (double)mantissa;
        *value = exponent < 0 ? m / kPowersOfTen[-exponent] : m * kPowersOfTen[exponent];
        return FL_COCO_OK;
    }
#endif
#if FL_COCO_LONG_DOUBLE_PATH
    /* 10^27 is the largest power of ten exact in a 64-bit mantissa. */
    if (exponent >= -27 && exponent <= 27) {
        long double power = 1.0L;
        for (int k = exponent < 0 ? -exponent : exponent; k > 0; k--) power *= 10.0L;
        long double m = (long double)mantissa;
        long double rounded = exponent < 0 ? m / power : m * power;
        int binary_exponent;
        uint64_t bits = (uint64_t)ldexpl(frexpl(rounded, &binary_exponent), 64);
        if ((bits & 0x7FF) == 0x400) return FL_COCO_INEXACT; /* halfway between two doubles */
        *value = (double)rounded;
        return FL_COCO_OK;
    }
#endif
    return FL_COCO_INEXACT;
}

/* The JSON number at *p as a double, *p moved past it. Digit runs stop at the first
   non-digit: the text ends with one (see fl_coco_segmentations). */
static int parse_number(const char **p, double *value) {
    const char *s = *p;
    int negative = *s == '-';
    s += negative;
    if (!is_digit(*s)) return FL_COCO_MALFORMED;
    uint64_t mantissa = 0;
    int digits = 0, exponent = 0;
    if (*s == '0') {
        s++;
    } else {
        for (; is_digit(*s); s++, digits++) mantissa = mantissa * 10 + (uint64_t)(*s - '0');
    }
    if (*s == '.') {
        s++;
        if (!is_digit(*s)) return FL_COCO_MALFORMED;
        for (; is_digit(*s); s++, digits++, exponent--)
            mantissa = mantissa * 10 + (uint64_t)(*s - '0');
    }
    if (*s == 'e' || *s == 'E') {
        s++;
        int sign = 1;
        if (*s == '+' || *s == '-') sign = *s++ == '-' ? -1 : 1;
        if (!is_digit(*s)) return FL_COCO_MALFORMED;
        int magnitude = 0;
        for (; is_digit(*s); s++)
            if (magnitude < 100000) magnitude = magnitude * 10 + (*s - '0');
        exponent += sign * magnitude;
    }
    *p = s;
    if (digits > 19) return FL_COCO_INEXACT; /* the mantissa may have wrapped */
    double result;
    int status = to_double(mantissa, exponent, &result);
    *value = negative ? -result : result;
    return status;
}

/* Output buffers and how much of them is used. */
typedef struct {
    int64_t *sizes;
    int64_t sizes_capacity;
    float *coordinates;
    int64_t coordinates_capacity;
    int64_t polygons; /* sizes used */
    int64_t values;   /* coordinates used */
} Output;

/* One polygon (a list of numbers) at *p, its '['; its coordinates appended to out. */
static int parse_polygon(const char **p, const char *end, Output *out) {
    const char *s = skip_spaces(*p + 1, end);
    int64_t n = 0;
    float *coordinates = out->coordinates + out->values;
    int64_t room = out->coordinates_capacity - out->values;
    if (s < end && *s == ']') {
        s++;
    } else {
        for (;;) {
            double value;
            int status = parse_number(&s, &value);
            if (status != FL_COCO_OK) return status;
            if (s >= end) return FL_COCO_MALFORMED;
            if (n == room) return FL_COCO_FULL;
            coordinates[n++] = (float)value;
            s = skip_spaces(s, end);
            if (s == end) return FL_COCO_MALFORMED;
            char c = *s++;
            if (c == ']') break;
            if (c != ',') return FL_COCO_MALFORMED;
            s = skip_spaces(s, end);
        }
    }
    if (n % 2) return FL_COCO_MALFORMED;
    if (out->polygons == out->sizes_capacity) return FL_COCO_FULL;
    out->sizes[out->polygons++] = n;
    out->values += n;
    *p = s;
    return FL_COCO_OK;
}

/* One segmentation, the `length` bytes at text: its count of polygons (or kind) in *polygons.
   On failure `out` is left as it was. */
static int parse_segmentation(const char *text, int64_t length, int64_t *polygons, Output *out) {
    const char *end = text + length;
    const char *p = skip_spaces(text, end);
    if (p == end) return FL_COCO_MALFORMED;
    if (*p == '{' || *p == 'n') { /* msgspec checked the JSON: an object, or null */
        *polygons = *p == '{' ? FL_COCO_OBJECT : FL_COCO_NULL;
        return FL_COCO_OK;
    }
    if (*p != '[') return FL_COCO_MALFORMED;
    Output before = *out;
    int status = FL_COCO_OK;
    p = skip_spaces(p + 1, end);
    if (p < end && *p == ']') {
        p++;
    } else {
        for (;;) {
            if (p == end || *p != '[') {
                status = FL_COCO_MALFORMED;
                break;
            }
            status = parse_polygon(&p, end, out);
            if (status != FL_COCO_OK) break;
            p = skip_spaces(p, end);
            char c = p < end ? *p++ : '\0';
            if (c == ']') break;
            if (c != ',') {
                status = FL_COCO_MALFORMED;
                break;
            }
            p = skip_spaces(p, end);
        }
    }
    if (status == FL_COCO_OK && skip_spaces(p, end) != end) status = FL_COCO_MALFORMED;
    if (status != FL_COCO_OK) {
        *out = before;
        return status;
    }
    *polygons = out->polygons - before.polygons;
    return FL_COCO_OK;
}

int fl_coco_exact_paths(void) { return FL_COCO_DOUBLE_PATH | FL_COCO_LONG_DOUBLE_PATH << 1; }

int64_t fl_coco_segmentations(const char *text, const int64_t *lengths, int64_t count,
                              int64_t *polygons, int64_t *sizes, int64_t sizes_capacity,
                              float *coordinates, int64_t coordinates_capacity, int64_t *used,
                              int *status) {
    Output out = {sizes, sizes_capacity, coordinates, coordinates_capacity, 0, 0};
    int64_t i = 0;
    *status = FL_COCO_OK;
    for (; i < count; text += lengths[i++]) {
        int parsed = parse_segmentation(text, lengths[i], polygons + i, &out);
        if (parsed == FL_COCO_INEXACT) {
            polygons[i] = FL_COCO_SKIPPED;
        } else if (parsed != FL_COCO_OK) {
            *status = parsed;
            break;
        }
    }
    used[0] = out.polygons;
    used[1] = out.values;
    return i;
}
