/* SPDX-License-Identifier: Apache-2.0 */
#include "er_stack.h"

static int er_stack_nothing(void *arg)
{
	(void)arg;
	return 0;
}

int er_stack_run_measured(struct er_stack_meter_s *meter, int (*fn)(void *), void *arg,
			  size_t *stack_used)
{
	size_t depth;

	if (meter->overhead == SIZE_MAX) {
		(void)meter->run(er_stack_nothing, NULL, &meter->overhead);
	}
	int ret = meter->run(fn, arg, &depth);

	/* An unknown depth (0) stays unknown rather than turning into a difference. */
	*stack_used = depth > meter->overhead ? depth - meter->overhead : 0;
	return ret;
}
