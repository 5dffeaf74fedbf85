/*
 * etrace_enter: the common entry of every wrapped table slot (x86-64 System V).
 *
 * A slot's stub loads its struct etrace_slot* into r11 and jumps here, so on
 * entry the stack and the argument registers are exactly the caller's:
 * [rsp] = return address, [rsp+8...] = stack arguments.
 *
 * Frame (rbp-based; rsp 16-byte aligned at each call):
 *   rsp+0   .. rsp+127   copy of ETRACE_STACK_WORDS (16) stack argument words,
 *                        so the original sees them where it expects them
 *   rsp+128 .. +591      struct etrace_frame (etrace.h; offsets checked there)
 */
#define STACK_COPY 128
#define FRAME      (STACK_COPY + 464)

    .text
    .globl etrace_enter
    .hidden etrace_enter
    .type etrace_enter, @function
etrace_enter:
    .cfi_startproc
    pushq %rbp
    .cfi_def_cfa_offset 16
    .cfi_offset %rbp, -16
    movq %rsp, %rbp
    .cfi_def_cfa_register %rbp
    pushq %rbx
    pushq %r12
    .cfi_offset %rbx, -24
    .cfi_offset %r12, -32
    subq $FRAME, %rsp
    leaq STACK_COPY(%rsp), %r12

    /* argument registers, the variadic count in al, the slot */
    movq %rdi, 0(%r12)
    movq %rsi, 8(%r12)
    movq %rdx, 16(%r12)
    movq %rcx, 24(%r12)
    movq %r8, 32(%r12)
    movq %r9, 40(%r12)
    movq %rax, 48(%r12)
    movq %r11, 56(%r12)
    movdqu %xmm0, 64(%r12)
    movdqu %xmm1, 80(%r12)
    movdqu %xmm2, 96(%r12)
    movdqu %xmm3, 112(%r12)
    movdqu %xmm4, 128(%r12)
    movdqu %xmm5, 144(%r12)
    movdqu %xmm6, 160(%r12)
    movdqu %xmm7, 176(%r12)
    movq 8(%rbp), %rax
    movq %rax, 240(%r12)

    /* copy the caller's stack arguments below our frame */
    xorl %ecx, %ecx
1:  movq 16(%rbp,%rcx,8), %rax
    movq %rax, (%rsp,%rcx,8)
    incq %rcx
    cmpq $16, %rcx
    jb 1b

    movq %r12, %rdi
    leaq 16(%rbp), %rsi
    call etrace_before
    movq %rax, %rbx                 /* the original function */

    movq 0(%r12), %rdi
    movq 8(%r12), %rsi
    movq 16(%r12), %rdx
    movq 24(%r12), %rcx
    movq 32(%r12), %r8
    movq 40(%r12), %r9
    movdqu 64(%r12), %xmm0
    movdqu 80(%r12), %xmm1
    movdqu 96(%r12), %xmm2
    movdqu 112(%r12), %xmm3
    movdqu 128(%r12), %xmm4
    movdqu 144(%r12), %xmm5
    movdqu 160(%r12), %xmm6
    movdqu 176(%r12), %xmm7
    movq 48(%r12), %rax
    call *%rbx

    movq %rax, 192(%r12)
    movq %rdx, 200(%r12)
    movdqu %xmm0, 208(%r12)
    movdqu %xmm1, 224(%r12)
    movq %r12, %rdi
    call etrace_after
    movq 192(%r12), %rax
    movq 200(%r12), %rdx
    movdqu 208(%r12), %xmm0
    movdqu 224(%r12), %xmm1

    addq $FRAME, %rsp
    popq %r12
    popq %rbx
    popq %rbp
    .cfi_def_cfa %rsp, 8
    ret
    .cfi_endproc
    .size etrace_enter, .-etrace_enter

    .section .note.GNU-stack,"",@progbits
