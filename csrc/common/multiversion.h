// FASTGL_MULTIVERSION: compile a hot loop for AVX-512, AVX2 and the baseline ISA and pick one at
// load time (function multiversioning), so the extension vectorizes wide where the CPU can and
// still runs on any x86-64 (no -march=native). GCC on x86-64 glibc only (it needs ifunc; clang
// rejects target_clones on templates); elsewhere the baseline ISA.
#pragma once

#include <cstdint>  // defines __GLIBC__ (through the C library headers) for the test below

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && defined(__GLIBC__) && \
    !defined(__CUDACC__)
#define FASTGL_MULTIVERSION_ISAS "avx512f", "avx2", "default"
#define FASTGL_MULTIVERSION __attribute__((target_clones(FASTGL_MULTIVERSION_ISAS)))
#else
#define FASTGL_MULTIVERSION
#endif
