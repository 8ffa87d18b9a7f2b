// The main of the test programs that need nothing before their test cases run.
#include "catch_session.hpp"

int main(int argc, char** argv) { return attngen::testing::run_test_session(argc, argv); }
