/* Names demangled as Valgrind demangles them (libiberty's cplus_demangle
 * with DMGL_ANSI | DMGL_PARAMS): the names below are Valgrind 3.19's for
 * the symbols of the C++ and Rust extensions the integration tests build. */
#include "testutil.h"
#include "gemleak/read/demangle.h"

static void assert_demangles(const char *symbol, const char *expected)
{
    g_autofree char *got = gl_demangle(symbol);
    ck_assert_msg(got != NULL, "%s: not demangled", symbol);
    ck_assert_str_eq(got, expected);
}

/* C++: a static function keeps its parameters, a template its return type. */
START_TEST(test_demangle_cpp)
{
    assert_demangles("_ZL12cppleak_leakm", "cppleak_leak(unsigned long)");
    assert_demangles("_ZN4PoolI6WidgetE4makeEv", "Pool<Widget>::make()");
    assert_demangles("_ZSt11make_uniqueI6WidgetJEENSt8__detail9_MakeUniqIT_E15__single_objectEDpOT0_",
                     "std::__detail::_MakeUniq<Widget>::__single_object std::make_unique<Widget>()");
}
END_TEST

/* Rust's legacy mangling, which C++'s demangler (the sanitizers') reads as
 * "rustleak::make_buffer::h1294082562c34df6": the hash goes, the escapes
 * are read. */
START_TEST(test_demangle_rust_legacy)
{
    assert_demangles("_ZN8rustleak11make_buffer17h1294082562c34df6E", "rustleak::make_buffer");
    assert_demangles("_ZN63_$LT$alloc..alloc..Global$u20$as$u20$core..alloc..Allocator$GT$"
                     "8allocate17hb17bba3853677583E",
                     "<alloc::alloc::Global as core::alloc::Allocator>::allocate");
}
END_TEST

/* Rust's v0 mangling (rustc -C symbol-mangling-version=v0, and parts of its
 * standard library), which the sanitizers leave mangled. */
START_TEST(test_demangle_rust_v0)
{
    assert_demangles("_RNvNtCsjrVPa4l567z_7mycrate6shapes11make_buffer",
                     "mycrate::shapes::make_buffer");
    assert_demangles("_RNvMs4_NtCslNYArtu3iFV_5alloc7raw_vecNtB5_11RawVecInner15try_allocate_in"
                     "CsduwmD7cSIQq_5gimli",
                     "<alloc::raw_vec::RawVecInner>::try_allocate_in");
}
END_TEST

/* As the sanitizer runtimes' __cxa_demangle gives them: C++ alone, a Rust
 * legacy name read as C++, its hash kept; no v0. */
START_TEST(test_demangle_as_cxa)
{
    g_autofree char *rust = gl_demangle_as_cxa("_ZN8rustleak11make_buffer17h1294082562c34df6E");
    ck_assert_str_eq(rust, "rustleak::make_buffer::h1294082562c34df6");
    g_autofree char *cpp = gl_demangle_as_cxa("_ZN4PoolI6WidgetE4makeEv");
    ck_assert_str_eq(cpp, "Pool<Widget>::make()");
    ck_assert_ptr_null(gl_demangle_as_cxa("_RNvNtCsjrVPa4l567z_7mycrate6shapes11make_buffer"));
    ck_assert_ptr_null(gl_demangle_as_cxa("lexer_new"));
}
END_TEST

/* C names, names already demangled and what is no mangled name stay as
 * they are. */
START_TEST(test_not_mangled)
{
    ck_assert(!gl_symbol_is_mangled("lexer_new"));
    ck_assert(!gl_symbol_is_mangled("Pool<Widget>::make()"));
    ck_assert(!gl_symbol_is_mangled(NULL));
    ck_assert(gl_symbol_is_mangled("_ZL12cppleak_leakm"));
    ck_assert(gl_symbol_is_mangled("_RNvCs1_1a1f"));
    ck_assert_ptr_null(gl_demangle("lexer_new"));
    ck_assert_ptr_null(gl_demangle("_Z"));
    ck_assert_ptr_null(gl_demangle("_Zno_such_thing"));
    ck_assert_ptr_null(gl_demangle(NULL));
}
END_TEST

/* The parts and clones an optimising compiler makes of a function read
 * as the function, a C name and a demangled C++ one alike. */
START_TEST(test_unsplit)
{
    const char *const cases[][2] = {
        { "scan.cold", "scan" },
        { "scan.part.0", "scan" },
        { "scan.isra.0", "scan" },
        { "scan.constprop.0", "scan" },
        { "scan.constprop.0.isra.0", "scan" },
        { "scan.part.0.cold", "scan" },
        { "rb_vm_exec.lto_priv.0", "rb_vm_exec" },
        { "scan", "scan" },
        { "foo(int) [clone .cold]", "foo(int)" },
        { "foo(int) [clone .constprop.0] [clone .isra.0]", "foo(int)" },
        { "rustleak::make_buffer", "rustleak::make_buffer" },
        { ".cold", ".cold" },
    };
    for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
        g_autofree char *whole = gl_symbol_unsplit(cases[i][0]);
        ck_assert_str_eq(whole, cases[i][1]);
    }
}
END_TEST

Suite *gl_demangle_suite(void)
{
    Suite *suite = suite_create("demangle");
    TCase *tc = tcase_create("demangle");
    tcase_add_test(tc, test_demangle_cpp);
    tcase_add_test(tc, test_demangle_rust_legacy);
    tcase_add_test(tc, test_demangle_rust_v0);
    tcase_add_test(tc, test_demangle_as_cxa);
    tcase_add_test(tc, test_not_mangled);
    tcase_add_test(tc, test_unsplit);
    suite_add_tcase(suite, tc);
    return suite;
}
