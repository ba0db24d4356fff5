/* The trampoline through which a library of src/agent/ sends the calls a
 * module makes through its GOT (the allocation front's alloc_via.c: an
 * extension's calls of Ruby's allocation functions; the client library's
 * growth.c: a target's calls of every allocation function). Each library
 * that includes this header and says VIA_TRAMPOLINE once gets its own
 * copy, hidden, and defines the two functions the copy calls: two such
 * libraries in one Ruby never call each other's.
 *
 * x86-64 only (VIA_STUBS): elsewhere no call is sent through it. */
#ifndef GEMLEAK_AGENT_VIA_INT_H
#define GEMLEAK_AGENT_VIA_INT_H

#include <stdint.h>

#include "agent_int.h"

#if defined(__x86_64__)
#define VIA_STUBS 1
#else
#define VIA_STUBS 0
#endif

/* How far below a watched call an allocation counts as made by it: the
 * function's own allocations are a few frames down (Ruby's allocator, a
 * table's growth); deeper, a callback into Ruby allocates for Ruby. */
#define VIA_REACH ((uintptr_t) 64 * 1024)

/* How many functions a library's trampoline can take (its stubs). */
#define VIA_N_STUBS 256

/* Called by the trampoline, defined by the library: the call of the
 * function of stub @index was made from @ret, with the trampoline's frame
 * @frame. Returns: the function to call. */
uintptr_t gl_via_enter(unsigned index, uintptr_t ret, uintptr_t frame) AGENT_HIDDEN;
/* The call whose trampoline's frame is @frame returned. */
void gl_via_leave(uintptr_t frame) AGENT_HIDDEN;

/* gemleak_via_stubs: VIA_N_STUBS entries of 16 bytes, each the index of
 * its function into r11 and a jump to gemleak_via, which saves the
 * arguments, notes the call (gl_via_enter, which returns the function),
 * calls it with the same registers and 8 words of the caller's stack
 * arguments, notes its end (gl_via_leave) and returns what it returned. A
 * frame of its own (rbp), so that unwinders, exact ones and the runtime's
 * fast one, walk through it to the caller; gemleak_via_return is the
 * return address its frame shows. */
extern const char gemleak_via_stubs[] AGENT_HIDDEN;
/* Words of the trampoline's frame @frame: the call's first argument, while
 * gl_via_enter runs; its result, while gl_via_leave runs; and one the
 * trampoline leaves alone, which gl_via_enter may keep a word in for
 * gl_via_leave. */
#define VIA_ARGUMENT(frame) (*(const uintptr_t *) ((frame) - 208))
#define VIA_RESULT(frame) (*(const uintptr_t *) ((frame) - 208))
#define VIA_SPARE(frame) (*(uintptr_t *) ((frame) - 208 + 56))
extern const char gemleak_via_return[] AGENT_HIDDEN;
#define VIA_STUB(index) ((uintptr_t) gemleak_via_stubs + 16 * (uintptr_t) (index))

#if VIA_STUBS
#define VIA_TRAMPOLINE                                                                      \
    __asm__(".text\n"                                                                       \
            ".p2align 4\n"                                                                  \
            ".globl gemleak_via\n"                                                          \
            ".hidden gemleak_via\n"                                                         \
            ".type gemleak_via,@function\n"                                                 \
            "gemleak_via:\n"                                                                \
            "  .cfi_startproc\n"                                                            \
            "  push %rbp\n"                                                                 \
            "  .cfi_def_cfa_offset 16\n"                                                    \
            "  .cfi_offset %rbp, -16\n"                                                     \
            "  mov %rsp, %rbp\n"                                                            \
            "  .cfi_def_cfa_register %rbp\n"                                                \
            "  sub $208, %rsp\n"                                                            \
            "  mov %rdi, 0(%rsp)\n"                                                         \
            "  mov %rsi, 8(%rsp)\n"                                                         \
            "  mov %rdx, 16(%rsp)\n"                                                        \
            "  mov %rcx, 24(%rsp)\n"                                                        \
            "  mov %r8, 32(%rsp)\n"                                                         \
            "  mov %r9, 40(%rsp)\n"                                                         \
            "  mov %rax, 48(%rsp)\n"                                                        \
            "  movdqa %xmm0, 64(%rsp)\n"                                                    \
            "  movdqa %xmm1, 80(%rsp)\n"                                                    \
            "  movdqa %xmm2, 96(%rsp)\n"                                                    \
            "  movdqa %xmm3, 112(%rsp)\n"                                                   \
            "  movdqa %xmm4, 128(%rsp)\n"                                                   \
            "  movdqa %xmm5, 144(%rsp)\n"                                                   \
            "  movdqa %xmm6, 160(%rsp)\n"                                                   \
            "  movdqa %xmm7, 176(%rsp)\n"                                                   \
            "  mov %r11d, %edi\n"                                                           \
            "  mov 8(%rbp), %rsi\n"                                                         \
            "  mov %rbp, %rdx\n"                                                            \
            "  call gl_via_enter\n"                                                         \
            "  mov %rax, %r10\n"                                                            \
            "  mov 0(%rsp), %rdi\n"                                                         \
            "  mov 8(%rsp), %rsi\n"                                                         \
            "  mov 16(%rsp), %rdx\n"                                                        \
            "  mov 24(%rsp), %rcx\n"                                                        \
            "  mov 32(%rsp), %r8\n"                                                         \
            "  mov 40(%rsp), %r9\n"                                                         \
            "  mov 48(%rsp), %rax\n"                                                        \
            "  movdqa 64(%rsp), %xmm0\n"                                                    \
            "  movdqa 80(%rsp), %xmm1\n"                                                    \
            "  movdqa 96(%rsp), %xmm2\n"                                                    \
            "  movdqa 112(%rsp), %xmm3\n"                                                   \
            "  movdqa 128(%rsp), %xmm4\n"                                                   \
            "  movdqa 144(%rsp), %xmm5\n"                                                   \
            "  movdqa 160(%rsp), %xmm6\n"                                                   \
            "  movdqa 176(%rsp), %xmm7\n"                                                   \
            "  sub $64, %rsp\n"                                                             \
            "  mov 16(%rbp), %r11\n"                                                        \
            "  mov %r11, 0(%rsp)\n"                                                         \
            "  mov 24(%rbp), %r11\n"                                                        \
            "  mov %r11, 8(%rsp)\n"                                                         \
            "  mov 32(%rbp), %r11\n"                                                        \
            "  mov %r11, 16(%rsp)\n"                                                        \
            "  mov 40(%rbp), %r11\n"                                                        \
            "  mov %r11, 24(%rsp)\n"                                                        \
            "  mov 48(%rbp), %r11\n"                                                        \
            "  mov %r11, 32(%rsp)\n"                                                        \
            "  mov 56(%rbp), %r11\n"                                                        \
            "  mov %r11, 40(%rsp)\n"                                                        \
            "  mov 64(%rbp), %r11\n"                                                        \
            "  mov %r11, 48(%rsp)\n"                                                        \
            "  mov 72(%rbp), %r11\n"                                                        \
            "  mov %r11, 56(%rsp)\n"                                                        \
            "  call *%r10\n"                                                                \
            ".globl gemleak_via_return\n"                                                   \
            ".hidden gemleak_via_return\n"                                                  \
            "gemleak_via_return:\n"                                                         \
            "  add $64, %rsp\n"                                                             \
            "  mov %rax, 0(%rsp)\n"                                                         \
            "  mov %rdx, 8(%rsp)\n"                                                         \
            "  movdqa %xmm0, 64(%rsp)\n"                                                    \
            "  movdqa %xmm1, 80(%rsp)\n"                                                    \
            "  mov %rbp, %rdi\n"                                                            \
            "  call gl_via_leave\n"                                                         \
            "  mov 0(%rsp), %rax\n"                                                         \
            "  mov 8(%rsp), %rdx\n"                                                         \
            "  movdqa 64(%rsp), %xmm0\n"                                                    \
            "  movdqa 80(%rsp), %xmm1\n"                                                    \
            "  leave\n"                                                                     \
            "  .cfi_def_cfa %rsp, 8\n"                                                      \
            "  ret\n"                                                                       \
            "  .cfi_endproc\n"                                                              \
            ".size gemleak_via, .-gemleak_via\n"                                            \
            ".p2align 4\n"                                                                  \
            ".globl gemleak_via_stubs\n"                                                    \
            ".hidden gemleak_via_stubs\n"                                                   \
            "gemleak_via_stubs:\n"                                                          \
            "  .set gl_via_index, 0\n"                                                      \
            "  .rept 256\n"                                                                 \
            "  mov $gl_via_index, %r11d\n"                                                  \
            "  jmp gemleak_via\n"                                                           \
            "  .p2align 4\n"                                                                \
            "  .set gl_via_index, gl_via_index + 1\n"                                       \
            "  .endr\n")
#endif

#endif
