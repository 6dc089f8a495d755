// The one doctest main of every test binary: compiled once, linked everywhere.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>
