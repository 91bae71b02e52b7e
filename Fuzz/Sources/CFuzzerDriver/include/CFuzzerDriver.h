// libFuzzer's driver, for executables that have a `main` of their own (a SwiftPM executable does:
// its entry point is linked as `main`, so libFuzzer's `main` is never used). The toolchain's
// libclang_rt.fuzzer provides the definition when linking with -sanitize=fuzzer.
#ifndef CHIME_FUZZER_DRIVER_H
#define CHIME_FUZZER_DRIVER_H

#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerRunDriver(int *argc, char ***argv, int (*callback)(const uint8_t *data, size_t size));

#endif
