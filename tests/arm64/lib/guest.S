/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The touch program, copied into the guest's code memslot.  With the
 * stage-1 MMU off every access goes straight to stage 2.
 *
 *	x0 = start, x1 = end, x2 = stride, x3 = mode (0 write, 1 read),
 *	x6 = MMIO address to report to (A64_DONE_GPA)
 *
 * write: each word at x0 gets x0's low 32 bits; read: w4 sums the words.
 * Then w4 is stored to [x6] (KVM_EXIT_MMIO) and the program spins there.
 * Position independent: relative branches only.
 */
	.text
	.globl	a64_guest_touch
	.globl	a64_guest_touch_end
	.balign	4
a64_guest_touch:
	mov	w4, #0
1:	cmp	x0, x1
	b.hs	4f
	cbnz	x3, 2f
	str	w0, [x0]
	b	3f
2:	ldr	w5, [x0]
	add	w4, w4, w5
3:	add	x0, x0, x2
	b	1b
4:	str	w4, [x6]
5:	b	5b
a64_guest_touch_end:
	.section .note.GNU-stack,"",%progbits
