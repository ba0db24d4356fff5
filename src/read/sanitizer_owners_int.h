/* The owners a report's stacks carry (src/read/ only): under a sanitizer's
 * engine the allocation front (src/agent/alloc.c) puts the test that
 * allocated a judged block into the block's own stack, a frame of
 * gemleak_alloc.so's whose offset says the test's index, and the client
 * library writes the tests' names by their index at exit
 * (GL_PROTO_MARKER_OWNER). The reader of a report (sanitizer_reader.c)
 * and the exact pass's walk (sanitizer_exact.c) read both here. */
#ifndef GEMLEAK_SANITIZER_OWNERS_INT_H
#define GEMLEAK_SANITIZER_OWNERS_INT_H

#include <glib.h>

#include "gemleak/base/protocol.h"

/* What the lines that name the owners begin with. */
#define GL_OWNER_NAME_LINE GL_PROTO_MARKER_PREFIX GL_PROTO_MARKER_OWNER "\t"

typedef struct GlOwnerFrames GlOwnerFrames;

/* Returns: (transfer full): no owner known yet; gl_owner_frames_free() frees it. */
GlOwnerFrames *gl_owner_frames_new(void);

void gl_owner_frames_free(GlOwnerFrames *owners);

/* Reads @line when it is "gemleak:owner-frames<TAB>OFFSET" or
 * "gemleak:owner<TAB>INDEX<TAB>NAME<TAB>LOCATION" (one malformed is
 * passed over). Returns: TRUE if it was either. */
gboolean gl_owner_frames_line(GlOwnerFrames *owners, const char *line);

/* Returns: TRUE if a frame in @module at @offset (its module offset) is
 * one that carries an owner, named or not (@owners nullable). */
gboolean gl_owner_frames_is_owner(const GlOwnerFrames *owners, const char *module, guint64 offset);

/* Returns: (transfer none) (nullable): the owner a frame in @module at
 * @offset (its module offset) says, "NAME<TAB>LOCATION" ("<TAB>": before
 * the first test), as the lines read so far name it; NULL when the frame
 * is none of the owners' (@owners nullable). */
const char *gl_owner_frames_owner(const GlOwnerFrames *owners, const char *module, guint64 offset);

/* Returns: TRUE if a line read named a test (not "<TAB>"). */
gboolean gl_owner_frames_any_test(const GlOwnerFrames *owners);

#endif
