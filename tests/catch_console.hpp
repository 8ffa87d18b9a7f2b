#pragma once
// Included by every test program's main before Catch2: console output wide enough for the registry's
// test names. Catch2 v2's console reporter throws out_of_range wrapping a failing test's name much
// longer than the width (seen at 155 characters of 80).
#define CATCH_CONFIG_CONSOLE_WIDTH 400
