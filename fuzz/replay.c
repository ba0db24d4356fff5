/* Replays fuzz inputs through the fuzz target without libFuzzer, for the
 * sanitizer build (make asan):  fuzz_replay FILE|DIR...  */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <glib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int replay(const char *path)
{
    if (g_file_test(path, G_FILE_TEST_IS_DIR)) {
        GDir *dir = g_dir_open(path, 0, NULL);
        const char *name;
        int n = 0;
        while (dir != NULL && (name = g_dir_read_name(dir)) != NULL) {
            char *child = g_build_filename(path, name, NULL);
            n += replay(child);
            g_free(child);
        }
        if (dir != NULL)
            g_dir_close(dir);
        return n;
    }
    char *data = NULL;
    gsize length = 0;
    if (!g_file_get_contents(path, &data, &length, NULL)) {
        fprintf(stderr, "fuzz_replay: cannot read %s\n", path);
        return 0;
    }
    LLVMFuzzerTestOneInput((const uint8_t *) data, length);
    g_free(data);
    return 1;
}

int main(int argc, char **argv)
{
    int n = 0;
    for (int i = 1; i < argc; i++)
        n += replay(argv[i]);
    printf("fuzz_replay: %d inputs replayed without a fault\n", n);
    return 0;
}
