/*
 * fuzz.h - what the libFuzzer targets in fuzz/ share: an invariant check that
 * crashes (so libFuzzer keeps the input) with a message saying what broke,
 * and a small reader that slices one fuzz input into parts.
 *
 * Each target is one fuzz_NAME.c with LLVMFuzzerTestOneInput, built by
 * `make fuzz-bins` with clang -fsanitize=fuzzer,address,undefined against the
 * project's sources; fuzz/corpus/NAME/ holds its seeds and every crash
 * reproducer found so far (replayed by `make test`, see docs/TESTING.md).
 */
#ifndef MB_FUZZ_H
#define MB_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

/* An invariant of the code under test: a failure aborts with its text. */
#define FUZZ_CHECK(cond, ...)                                                         \
    do {                                                                              \
        if (!(cond)) {                                                                \
            fprintf(stderr, "%s:%d: invariant broken: %s: ", __FILE__, __LINE__, #cond); \
            fprintf(stderr, __VA_ARGS__);                                             \
            fputc('\n', stderr);                                                      \
            abort();                                                                  \
        }                                                                             \
    } while (0)

/* Consumes a fuzz input from the front: bytes, small integers and parts cut
 * at a separator, so that one input can drive several arguments. */
typedef struct fuzz_in {
    const uint8_t *p;
    size_t n;
} fuzz_in;

static inline unsigned fuzz_byte(fuzz_in *in)
{
    if (!in->n) return 0;
    in->n--;
    return *in->p++;
}

/* The bytes up to the next `sep` (or the rest); the separator is consumed. */
static inline size_t fuzz_part(fuzz_in *in, uint8_t sep, const uint8_t **out)
{
    const uint8_t *end = in->n ? memchr(in->p, sep, in->n) : NULL;
    size_t len = end ? (size_t)(end - in->p) : in->n;
    *out = in->p;
    in->p += len;
    in->n -= len;
    if (end) {
        in->p++;
        in->n--;
    }
    return len;
}

/* A NUL-terminated copy (embedded NULs kept; the caller frees). */
static inline char *fuzz_str(const uint8_t *p, size_t n)
{
    char *s = malloc(n + 1);
    if (!s) abort();
    if (n) memcpy(s, p, n);
    s[n] = '\0';
    return s;
}

#endif /* MB_FUZZ_H */
