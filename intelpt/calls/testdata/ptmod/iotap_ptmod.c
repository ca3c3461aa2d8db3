// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * iotap_ptmod: a small module whose functions call each other, built by
 * intelpt/calls' lab test against the lab kernel's source, so that a
 * kernel-mode trace through module code can be decoded from the module's
 * text in /proc/kcore and named from /proc/kallsyms as NAME [iotap_ptmod].
 * iotap_ptmod_run also calls the kernel (hex_to_bin). The input comes from a module parameter so that the compiler cannot
 * fold the calls away.
 */
#include <linux/module.h>
#include <linux/init.h>
#include <linux/kernel.h>

static int ptmod_input = 5;
module_param(ptmod_input, int, 0444);

static noinline int ptmod_leaf(int x)
{
	return x * 3 + 1;
}

static noinline int ptmod_mid(int x)
{
	int s = 0;

	if (x > 2)
		s += ptmod_leaf(x);
	s += ptmod_leaf(x + 1);
	return s;
}

static noinline int iotap_ptmod_run(int x)
{
	/* hex_to_bin: a call into the kernel (lib/hexdump.c) */
	return ptmod_mid(x) + ptmod_leaf(x) + hex_to_bin('a' + (x & 3));
}

static int __init ptmod_init(void)
{
	pr_info("iotap_ptmod: %d\n", iotap_ptmod_run(ptmod_input));
	return 0;
}

static void __exit ptmod_exit(void)
{
}

module_init(ptmod_init);
module_exit(ptmod_exit);
MODULE_LICENSE("Dual MIT/GPL");
MODULE_DESCRIPTION("iotap test module: calls in module code for Intel PT decoding");
