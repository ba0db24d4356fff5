/* Deciding which Valgrind errors belong to the target extension. Knows Ruby
 * (its objects, its callbacks, Init_ functions), nothing about XML.
 *
 * The rules (rules.h) are what the user asked for; they are built once,
 * then shared read-only by every thread. A GlClassifier applies the rules
 * for one thread and caches what it learns about each object path and
 * function name, which repeat in nearly every frame. */
#ifndef GEMLEAK_CLASSIFY_H
#define GEMLEAK_CLASSIFY_H

#include <glib.h>
#include "gemleak/read/process.h"
#include "gemleak/base/record.h"
#include "gemleak/judge/rules.h"

typedef enum {
    GL_VERDICT_KEEP,
    GL_VERDICT_SKIP_KIND,       /* a leak kind not asked for */
    GL_VERDICT_SKIP_NO_TARGET,  /* never enters a target object: Ruby's or a library's */
    GL_VERDICT_SKIP_RUBY,       /* Ruby allocated for itself, under a Ruby function the
                                 * target called (a string, a table, a callback) */
    GL_VERDICT_SKIP_INIT,       /* while the extension was loaded: runs once */
    GL_VERDICT_SKIP_UNJUDGED,   /* of a process the engine gives no true verdict on (a Ruby
                                 * older than it needs): not classified, and the run is
                                 * INCOMPLETE for that process */
    GL_N_VERDICTS
} GlVerdict;

/* Returns: (transfer none): a short phrase for summaries, after @count
 * errors: "not in a target", "of another leak kind". */
const char *gl_verdict_describe(GlVerdict verdict, guint64 count);

typedef struct GlClassifier GlClassifier;

/* Returns: (transfer full): a classifier for one thread; @rules must outlive it. */
GlClassifier *gl_classifier_new(const GlRules *rules);
void gl_classifier_free(GlClassifier *classifier);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(GlClassifier, gl_classifier_free)

/* Says whether the process whose records come next ran with Ruby freeing
 * its own memory at exit (gemleak/read/run_dir.h): Ruby then left
 * none of its own, so what is still lost under a Ruby API was handed to
 * the extension, and rule 2 (Ruby's own memory, and with it rule 4's
 * uncertainty) does not apply; Init code (rule 3) and --skip-function
 * still do. */
void gl_classifier_set_free_at_exit(GlClassifier *classifier, gboolean free_at_exit);

/* Tells the classifier whether the Ruby of the process in hand keeps frame
 * pointers (what the helper wrote of it), and asks it. */
void gl_classifier_set_frame_pointers(GlClassifier *classifier, gboolean frame_pointers);
gboolean gl_classifier_frame_pointers(const GlClassifier *classifier);

/* Returns: TRUE if rule 2 (Ruby's own memory) is on (--no-default-skips
 * turns it off). */
gboolean gl_classifier_ruby_rule(const GlClassifier *classifier);

/* Returns: TRUE if rule 2 decides @record, a leak whose stack shows no
 * frame of a target but was cut before its end (a depth limit, an unwinder
 * that gave up): a frame in view is a Ruby function that allocates for
 * Ruby, so that whatever lies beyond the cut, Ruby allocated the block for
 * itself (an API whose memory its caller releases is looked past, to its
 * caller), in every process: what Ruby allocated for its own use and left,
 * even at exit under free-at-exit, is Ruby's leftover. */
gboolean gl_classifier_ruby_in_view(GlClassifier *classifier, const GlRecord *record);

/* Has the classifier judge every leak kind as --leak-kinds asked for
 * (@every_kind), or only those asked (the default): --growth's samples
 * are judged by the same rules whatever their kind (judge/growth.h). */
void gl_classifier_set_every_kind(GlClassifier *classifier, gboolean every_kind);

/* Returns: TRUE if @record, classified, was allocated by one of Ruby's
 * functions that allocate a Data object's struct, called by a target:
 * the innermost of Ruby's frames next to the target's innermost frame is
 * rb_data_object_zalloc, rb_data_typed_object_zalloc or their _make
 * variants (--growth: held by the objects, gemleak(1), RULES). */
gboolean gl_classifier_data_struct(GlClassifier *classifier, const GlRecord *record);

/* Adds every object path the classifier has met in a frame to @set (a
 * GHashTable of owned strings). */
void gl_classifier_collect_objects(const GlClassifier *classifier, GHashTable *set);

/* Decides what @record is, marks its frames that lie in a target
 * (in_target), and for a kept leak whose owner the frames do not tell (a
 * Ruby without symbols) sets record->uncertain. @process (nullable), what
 * the input said of the record's process, names its executable, which is
 * Ruby whatever it is called. */
GlVerdict gl_classifier_classify(GlClassifier *classifier, GlRecord *record,
                                 const GlProcess *process);

#endif
