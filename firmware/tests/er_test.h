/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file
 * @brief A minimal test harness for the firmware's C tests: checks that report file, line
 * and values, and a summary line "N passed, N failed" whose exit code ctest reads.
 */
#ifndef ER_TEST_H_
#define ER_TEST_H_

#include <stdio.h>
#include <string.h>

static int er_test_passed;
static int er_test_failed;

#define ER_CHECK(cond)                                                                        \
	do {                                                                                  \
		if (cond) {                                                                   \
			er_test_passed++;                                                     \
		} else {                                                                      \
			er_test_failed++;                                                     \
			fprintf(stderr, "%s:%d: FAILED: %s\n", __FILE__, __LINE__, #cond);    \
		}                                                                             \
	} while (0)

#define ER_CHECK_INT(a, b)                                                                    \
	do {                                                                                  \
		long long er_a_ = (long long)(a), er_b_ = (long long)(b);                     \
		if (er_a_ == er_b_) {                                                         \
			er_test_passed++;                                                     \
		} else {                                                                      \
			er_test_failed++;                                                     \
			fprintf(stderr, "%s:%d: FAILED: %s == %s (%lld != %lld)\n", __FILE__, \
				__LINE__, #a, #b, er_a_, er_b_);                              \
		}                                                                             \
	} while (0)

#define ER_CHECK_STR(a, b)                                                                    \
	do {                                                                                  \
		const char *er_a_ = (a), *er_b_ = (b);                                        \
		if (strcmp(er_a_, er_b_) == 0) {                                              \
			er_test_passed++;                                                     \
		} else {                                                                      \
			er_test_failed++;                                                     \
			fprintf(stderr, "%s:%d: FAILED: %s\n  got:      %s\n  expected: %s\n", \
				__FILE__, __LINE__, #a, er_a_, er_b_);                        \
		}                                                                             \
	} while (0)

/** Checks that @p hay contains @p needle. */
#define ER_CHECK_HAS(hay, needle)                                                             \
	do {                                                                                  \
		const char *er_h_ = (hay), *er_n_ = (needle);                                 \
		if (strstr(er_h_, er_n_) != NULL) {                                           \
			er_test_passed++;                                                     \
		} else {                                                                      \
			er_test_failed++;                                                     \
			fprintf(stderr, "%s:%d: FAILED: %s lacks %s\n  in: %s\n", __FILE__,   \
				__LINE__, #hay, er_n_, er_h_);                                \
		}                                                                             \
	} while (0)

#define ER_RUN(test)                                                                          \
	do {                                                                                  \
		int er_before_ = er_test_failed;                                              \
		test();                                                                       \
		printf("%-40s %s\n", #test, er_test_failed == er_before_ ? "ok" : "FAILED");  \
	} while (0)

/** @brief Prints "N passed, N failed". @return the process exit code */
static inline int er_test_summary(void)
{
	printf("%d passed, %d failed\n", er_test_passed, er_test_failed);
	return er_test_failed == 0 ? 0 : 1;
}

#endif /* ER_TEST_H_ */
