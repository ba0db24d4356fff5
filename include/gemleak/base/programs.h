/* Which program a path names: Ruby itself, whatever a distribution
 * calls it. The run plans with it (a bare ruby, a Ruby command the
 * engine's Ruby requirement applies to) and the rules judge with it
 * (Ruby's own frames). */
#ifndef GEMLEAK_PROGRAMS_H
#define GEMLEAK_PROGRAMS_H

#include <glib.h>

/* Returns: TRUE if @path (nullable) names Ruby itself: the ruby executable
 * (ruby, ruby3.1, ruby-3.4.5) or its shared library (libruby.so.3.3.0,
 * libruby-3.1.so.3.1.2), by the names protocol.h's GL_PROTO_RUBY_PROGRAMS
 * gives, Ruby's own as the helper knows it too. */
gboolean gl_is_ruby_object(const char *path);

#endif
