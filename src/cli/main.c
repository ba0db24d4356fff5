/* gemleak: find the real memory leaks in Ruby native extensions. */
#include <stdio.h>

#include "gemleak/cli/cli.h"

int main(int argc, char **argv)
{
    return gemleak_main(argc, argv, stdout, stderr);
}
