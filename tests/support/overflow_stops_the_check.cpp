// Linked into every exercise's check program, which compiles the exercise with UBSan's
// signed-overflow check: the first overflow prints UBSan's line (file, line, the values) and
// aborts, so doctest reports the test case that crashed and the check fails instead of exiting
// quietly with status 1.
extern "C" const char* __ubsan_default_options();
extern "C" const char* __ubsan_default_options() { return "abort_on_error=1:print_stacktrace=0"; }
