/* The client library as a Ruby extension (gemleak_client.so): what the
 * helper calls natively, without Fiddle, which is not a default gem from
 * Ruby 3.5 on (a bundled one, which Bundler will not load without a
 * Gemfile line) and says so on the suite's standard error under Bundler on
 * 3.4. The helper requires this file by its path; Ruby calls
 * Init_gemleak_client, which defines GemLeakHelper::Native:
 *
 *   running_on_valgrind             -> Integer (0 natively)
 *   valgrind_marker(text)           a line of Valgrind's output
 *   valgrind_check, valgrind_full_check, valgrind_lost(which) -> Integer
 *   valgrind_changed_check          a leak check of what changed (--growth)
 *   valgrind_quick_check            a leak check that lists nothing (its baseline)
 *   owners_start -> Integer, owner(text), owner_none, owners_write
 *   growth_target(path) -> Integer  count the sites of that module (1: a file)
 *   growth_start -> Integer         1 counting, 0 cannot (no runtime's hooks)
 *   growth_checkpoint(text) -> Integer  the marker @text and what changed
 *   sanitizer(name) -> Integer      1 if the runtime has @name (below)
 *   sanitizer_line(text)            a line of the runtime's report
 *   sanitizer_check -> Integer      its recoverable leak check
 *   sanitizer_root(address, size)   a root region for its check
 *   sanitizer_unroot(address, size) that region no more
 *   sanitizer_warm -> Integer       the symbolizer reads Ruby's object now
 *   before_check                    what the allocation front writes first
 *   exiting                         Ruby's exit begins: the front keeps no address back
 *   recent_unkept -> Integer        1: the front could not keep recent addresses back
 *   requiring(on)                   a require starts (1) or ends (0) on this thread
 *   address(object) -> Integer      where a Ruby object lies
 *   loaded(name) -> Integer         1 if the dynamic loader loaded @name (a path;
 *                                   a base name: any object of that name)
 *   at_exit_uncollected(work) -> Integer  @work (a Proc) called at exit, as
 *                                   at_exit calls a block, the collector off
 *                                   until it runs (below)
 *
 * Each text is read up to its first NUL (the helper ends them with one).
 * Ruby's API is found by name (dlsym) as Init runs: the library has no
 * undefined symbol, whatever Ruby loads it (Debian's libruby, a static
 * ruby), and is harmless where it is preloaded and Ruby is not there. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <link.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "gemleak/base/protocol.h"
#include "agent_int.h"

typedef uintptr_t VALUE;
typedef uintptr_t ID;
typedef VALUE (*Method)(void);

/* Not in a header: Ruby finds it by name. */
void Init_gemleak_client(void);

/* The client's own (gemleak_client.c, owners.c). */
int gemleak_client_running_on_valgrind(void);
void gemleak_client_marker(const char *text);
void gemleak_client_leak_check(void);
void gemleak_client_full_leak_check(void);
void gemleak_client_changed_leak_check(void);
void gemleak_client_quick_leak_check(void);
long gemleak_client_lost(int which);
int gemleak_client_owners_start(void);
void gemleak_client_owner(const char *text);
void gemleak_client_owners_write(void);
int gemleak_client_growth_target(const char *path);
int gemleak_client_growth_start(void);
int gemleak_client_growth_checkpoint(const char *text);

static struct {
    VALUE (*define_module_under)(VALUE, const char *);
    VALUE (*const_get)(VALUE, ID);
    ID (*intern)(const char *);
    void (*define_module_function)(VALUE, const char *, Method, int);
    char *(*string_value_ptr)(volatile VALUE *);
    long (*num2long)(VALUE);
    VALUE (*int2inum)(intptr_t);
    VALUE (*uint2inum)(uintptr_t);
    const VALUE *object;   /* rb_cObject */
    /* at_exit_uncollected's; NULL where a Ruby lacks one: not defined then */
    void (*set_end_proc)(void (*)(VALUE), VALUE);
    void (*register_address)(VALUE *);
    VALUE (*gc_disable)(void);
    VALUE (*gc_enable)(void);
    VALUE (*proc_call)(VALUE, VALUE);
    VALUE (*ary_new)(void);
    VALUE (*protect)(VALUE (*)(VALUE), VALUE, int *);
    void (*jump_tag)(int);
} ruby;

/* The runtime's, when it is in the process. */
typedef void (*Say)(const char *);
typedef void (*Root)(const void *, size_t);
typedef void (*BeforeCheck)(void);

/* Returns: the bytes of the String in *@text (converted in place, as
 * StringValuePtr does, so that the caller's variable keeps the string
 * the bytes belong to). */
static const char *text_of(VALUE *text)
{
    return ruby.string_value_ptr(text);
}

static VALUE integer(long value)
{
    return ruby.int2inum((intptr_t) value);
}

static VALUE native_running_on_valgrind(VALUE self)
{
    (void) self;
    return integer(gemleak_client_running_on_valgrind());
}

static VALUE native_valgrind_marker(VALUE self, VALUE text)
{
    (void) self;
    gemleak_client_marker(text_of(&text));
    return integer(0);
}

static VALUE native_valgrind_check(VALUE self)
{
    (void) self;
    gemleak_client_leak_check();
    return integer(0);
}

static VALUE native_valgrind_full_check(VALUE self)
{
    (void) self;
    gemleak_client_full_leak_check();
    return integer(0);
}

static VALUE native_valgrind_changed_check(VALUE self)
{
    (void) self;
    gemleak_client_changed_leak_check();
    return integer(0);
}

static VALUE native_valgrind_quick_check(VALUE self)
{
    (void) self;
    gemleak_client_quick_leak_check();
    return integer(0);
}

static VALUE native_valgrind_lost(VALUE self, VALUE which)
{
    (void) self;
    return integer(gemleak_client_lost((int) ruby.num2long(which)));
}

static VALUE native_owners_start(VALUE self)
{
    (void) self;
    return integer(gemleak_client_owners_start());
}

static VALUE native_owner(VALUE self, VALUE text)
{
    (void) self;
    gemleak_client_owner(text_of(&text));
    return integer(0);
}

static VALUE native_owner_none(VALUE self)
{
    (void) self;
    gemleak_client_owner(NULL);
    return integer(0);
}

static VALUE native_owners_write(VALUE self)
{
    (void) self;
    gemleak_client_owners_write();
    return integer(0);
}

static VALUE native_growth_target(VALUE self, VALUE path)
{
    (void) self;
    return integer(gemleak_client_growth_target(text_of(&path)));
}

static VALUE native_growth_start(VALUE self)
{
    (void) self;
    return integer(gemleak_client_growth_start());
}

static VALUE native_growth_checkpoint(VALUE self, VALUE text)
{
    (void) self;
    return integer(gemleak_client_growth_checkpoint(text_of(&text)));
}

static void *runtime(const char *name)
{
    return dlsym(RTLD_DEFAULT, name);
}

static VALUE native_sanitizer(VALUE self, VALUE name)
{
    (void) self;
    return integer(runtime(text_of(&name)) != NULL);
}

static VALUE native_sanitizer_line(VALUE self, VALUE text)
{
    (void) self;
    Say say = (Say) (uintptr_t) runtime("__sanitizer_report_error_summary");
    if (say != NULL)
        say(text_of(&text));
    return integer(say != NULL);
}

static VALUE native_sanitizer_check(VALUE self)
{
    (void) self;
    AgentCheck check = (AgentCheck) (uintptr_t) runtime("__lsan_do_recoverable_leak_check");
    if (check == NULL)
        return integer(-1);
    return integer(agent_checked(
        check, (AgentChecking) (uintptr_t) runtime(GL_PROTO_CHECKING_FUNCTION)));
}

/* Has the runtime's symbolizer read Ruby's own object (its symbols and
 * DWARF, inflated where they are compressed), once, as a report would:
 * before a fork, so that each child inherits what it read and does not
 * read it again for its first report. */
static VALUE native_sanitizer_warm(VALUE self)
{
    (void) self;
    typedef void (*Symbolize)(void *, const char *, char *, size_t);
    Symbolize symbolize = (Symbolize) (uintptr_t) runtime("__sanitizer_symbolize_pc");
    void *ruby_code = dlsym(RTLD_DEFAULT, "ruby_xmalloc");
    char name[256];
    if (symbolize == NULL || ruby_code == NULL)
        return integer(0);
    symbolize(ruby_code, "%f %s", name, sizeof name);
    return integer(1);
}

static VALUE native_sanitizer_root(VALUE self, VALUE address, VALUE size)
{
    (void) self;
    Root root = (Root) (uintptr_t) runtime("__lsan_register_root_region");
    if (root != NULL)
        root((const void *) (uintptr_t) ruby.num2long(address), (size_t) ruby.num2long(size));
    return integer(root != NULL);
}

static VALUE native_sanitizer_unroot(VALUE self, VALUE address, VALUE size)
{
    (void) self;
    Root unroot = (Root) (uintptr_t) runtime("__lsan_unregister_root_region");
    if (unroot != NULL)
        unroot((const void *) (uintptr_t) ruby.num2long(address), (size_t) ruby.num2long(size));
    return integer(unroot != NULL);
}

static VALUE native_before_check(VALUE self)
{
    (void) self;
    BeforeCheck before = (BeforeCheck) (uintptr_t) runtime(GL_PROTO_BEFORE_CHECK_FUNCTION);
    if (before != NULL)
        before();
    return integer(before != NULL);
}

/* Ruby's exit begins: the allocation front keeps the extensions' blocks
 * from recent addresses no more (its gemleak_alloc_exiting, when it is
 * loaded). */
static VALUE native_exiting(VALUE self)
{
    (void) self;
    void (*exiting)(void) = (void (*)(void)) (uintptr_t) runtime("gemleak_alloc_exiting");
    if (exiting != NULL)
        exiting();
    return integer(exiting != NULL);
}

/* 1 when the allocation front was to keep the extensions' blocks from
 * recent addresses and could not (its gemleak_alloc_recent_unkept). */
static VALUE native_recent_unkept(VALUE self)
{
    (void) self;
    int (*unkept)(void) = (int (*)(void)) (uintptr_t) runtime("gemleak_alloc_recent_unkept");
    return integer(unkept != NULL && unkept());
}

/* The allocation front's gemleak_alloc_requiring, NULL without it. */
static void (*requiring)(int);

static VALUE native_requiring(VALUE self, VALUE on)
{
    (void) self;
    if (requiring != NULL)
        requiring(ruby.num2long(on) != 0);
    return integer(requiring != NULL);
}

/* A heap object's VALUE is its address (what Fiddle.dlwrap gave). */
static VALUE native_address(VALUE self, VALUE object)
{
    (void) self;
    return ruby.uint2inum(object);
}

/* Whether an object the dynamic loader loaded is *@data's name. */
static int loaded_as(struct dl_phdr_info *info, size_t size, void *data)
{
    (void) size;
    const char *name = data;
    const char *object = info->dlpi_name != NULL ? info->dlpi_name : "";
    if (strchr(name, '/') == NULL) {
        const char *slash = strrchr(object, '/');
        object = slash != NULL ? slash + 1 : object;
    }
    return strcmp(object, name) == 0;
}

/* The loaded objects walked (the helper read /proc/self/maps, some 0.5 ms
 * a process under a sanitizer's runtime, whose mappings are hundreds). */
static VALUE native_loaded(VALUE self, VALUE name)
{
    (void) self;
    const char *text = text_of(&name);
    return integer(*text != '\0' && dl_iterate_phdr(loaded_as, (void *) text) != 0);
}

/* The helper's exit work (a Proc), kept from the collector
 * (rb_gc_register_address). */
static VALUE exit_work;

static VALUE call_exit_work(VALUE unused)
{
    (void) unused;
    return ruby.proc_call(exit_work, ruby.ary_new());
}

/* At exit, with the collector as the suite left it: a process that ends
 * with GC.stress on (json's suite forks a child that sets it) makes a full
 * collection at each allocation, and a block at_exit calls costs one (its
 * arguments' Array), each call whose cache the suite's definitions emptied
 * one more (and GC.stress read or set from here through its Method objects,
 * rb_method_call, two a call): some 2 ms each on json's heap, seven before
 * the helper's first line could turn it off.
 * Here the collector is off (rb_gc_disable, which allocates nothing) until
 * the work is done: the work turns GC.stress off and on again itself, and
 * the collector on for its checks. The collector is back on, if it was,
 * whatever the work raised. Qfalse is 0 in every Ruby. */
static void exit_uncollected(VALUE unused)
{
    (void) unused;
    VALUE was_off = ruby.gc_disable();
    int state = 0;
    ruby.protect(call_exit_work, 0, &state);
    if (was_off == 0)
        ruby.gc_enable();
    if (state != 0)
        ruby.jump_tag(state);
}

/* Registers exit_uncollected where at_exit would register a block: the
 * same list, the same order. Once: a second call changes nothing. */
static VALUE native_at_exit_uncollected(VALUE self, VALUE work)
{
    (void) self;
    if (exit_work != 0)
        return integer(0);
    exit_work = work;
    ruby.register_address(&exit_work);
    ruby.set_end_proc(exit_uncollected, 0);
    return integer(1);
}

#define FOUND(field, name) ((ruby.field = (__typeof__(ruby.field)) (uintptr_t) dlsym(RTLD_DEFAULT, name)) != NULL)

void Init_gemleak_client(void)
{
    if (!FOUND(define_module_under, "rb_define_module_under") || !FOUND(const_get, "rb_const_get") ||
        !FOUND(intern, "rb_intern") || !FOUND(define_module_function, "rb_define_module_function") ||
        !FOUND(string_value_ptr, "rb_string_value_ptr") || !FOUND(num2long, "rb_num2long") ||
        !FOUND(int2inum, "rb_int2inum") || !FOUND(uint2inum, "rb_uint2inum") ||
        !FOUND(object, "rb_cObject"))
        return;  /* the helper finds no Native, and says what it cannot do */
    VALUE helper = ruby.const_get(*ruby.object, ruby.intern("GemLeakHelper"));
    VALUE native = ruby.define_module_under(helper, "Native");
    static const struct {
        const char *name;
        Method function;
        int arity;
    } methods[] = {
        { "running_on_valgrind", (Method) (uintptr_t) native_running_on_valgrind, 0 },
        { "valgrind_marker", (Method) (uintptr_t) native_valgrind_marker, 1 },
        { "valgrind_check", (Method) (uintptr_t) native_valgrind_check, 0 },
        { "valgrind_full_check", (Method) (uintptr_t) native_valgrind_full_check, 0 },
        { "valgrind_lost", (Method) (uintptr_t) native_valgrind_lost, 1 },
        { "valgrind_changed_check", (Method) (uintptr_t) native_valgrind_changed_check, 0 },
        { "valgrind_quick_check", (Method) (uintptr_t) native_valgrind_quick_check, 0 },
        { "owners_start", (Method) (uintptr_t) native_owners_start, 0 },
        { "owner", (Method) (uintptr_t) native_owner, 1 },
        { "owner_none", (Method) (uintptr_t) native_owner_none, 0 },
        { "owners_write", (Method) (uintptr_t) native_owners_write, 0 },
        { "growth_target", (Method) (uintptr_t) native_growth_target, 1 },
        { "growth_start", (Method) (uintptr_t) native_growth_start, 0 },
        { "growth_checkpoint", (Method) (uintptr_t) native_growth_checkpoint, 1 },
        { "sanitizer", (Method) (uintptr_t) native_sanitizer, 1 },
        { "sanitizer_line", (Method) (uintptr_t) native_sanitizer_line, 1 },
        { "sanitizer_check", (Method) (uintptr_t) native_sanitizer_check, 0 },
        { "sanitizer_root", (Method) (uintptr_t) native_sanitizer_root, 2 },
        { "sanitizer_unroot", (Method) (uintptr_t) native_sanitizer_unroot, 2 },
        { "sanitizer_warm", (Method) (uintptr_t) native_sanitizer_warm, 0 },
        { "before_check", (Method) (uintptr_t) native_before_check, 0 },
        { "exiting", (Method) (uintptr_t) native_exiting, 0 },
        { "recent_unkept", (Method) (uintptr_t) native_recent_unkept, 0 },
        { "address", (Method) (uintptr_t) native_address, 1 },
        { "loaded", (Method) (uintptr_t) native_loaded, 1 },
    };
    for (size_t i = 0; i < sizeof methods / sizeof methods[0]; i++)
        ruby.define_module_function(native, methods[i].name, methods[i].function, methods[i].arity);
    if (FOUND(set_end_proc, "rb_set_end_proc") && FOUND(register_address, "rb_gc_register_address") &&
        FOUND(gc_disable, "rb_gc_disable") && FOUND(gc_enable, "rb_gc_enable") &&
        FOUND(proc_call, "rb_proc_call") && FOUND(ary_new, "rb_ary_new") &&
        FOUND(protect, "rb_protect") && FOUND(jump_tag, "rb_jump_tag"))
        ruby.define_module_function(native, "at_exit_uncollected",
                                    (Method) (uintptr_t) native_at_exit_uncollected, 1);
    /* requiring: called from the require of any Ractor (a Ractor's require
     * runs the helper's hook), which a method Ruby does not know for
     * Ractor-safe refuses (Ractor::UnsafeError); it only touches the
     * calling thread's own state. The others stay the main Ractor's. */
    requiring = (void (*)(int)) (uintptr_t) runtime("gemleak_alloc_requiring");
    void (*ractor_safe)(int) = (void (*)(int)) (uintptr_t) runtime("rb_ext_ractor_safe");
    if (ractor_safe != NULL)
        ractor_safe(1);
    ruby.define_module_function(native, "requiring", (Method) (uintptr_t) native_requiring, 1);
    if (ractor_safe != NULL)
        ractor_safe(0);
}
