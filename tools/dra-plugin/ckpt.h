/* ckpt: the kubelet plugin's checkpoint, the claims it has prepared on
 * this node, kept on disk so that a restart of the plugin or the kubelet
 * neither loses nor repeats a prepare.
 *
 * The file is one JSON object:
 *   {"version":1,"checksum":"<sha1>","claims":{"<uid>":{...}}}
 * where checksum is the SHA-1 of the claims member written compactly
 * with sorted keys: a file cut short, edited by hand or damaged on disk
 * is told from a good one. It is written as a new file beside the old,
 * then renamed over it: a reader sees the old file or the new, whole.
 * ckpt_save also syncs the new file before the rename and the directory
 * after it (durable: it survives a crash of the machine); ckpt_stage does
 * not (it survives a crash of the plugin, the page cache keeping it, not
 * necessarily one of the machine). */
#ifndef HAZ_CKPT_H
#define HAZ_CKPT_H

#include <stddef.h>

#include <jansson.h>

/* ckpt_load reads path into *claims (a new object; an empty one when the
 * file does not exist). Returns 0, or -1 with *claims NULL and why (n
 * bytes) naming the file and what is wrong with it:
 *   "<path>: line 3 column 7: unexpected token" (with position) or
 *   "<path>: checksum mismatch: the file was changed or damaged". */
int ckpt_load(const char *path, json_t **claims, char *why, size_t n);

/* ckpt_save writes claims to path durably. Returns 0, or -1 with why;
 * the previous file is then left as it was. */
int ckpt_save(const char *path, const json_t *claims, char *why, size_t n);

/* ckpt_stage writes claims to path as ckpt_save does, without syncing:
 * for a state that only a crash of the plugin must find (see dra.c). */
int ckpt_stage(const char *path, const json_t *claims, char *why, size_t n);

/* ckpt_set_aside renames a checkpoint that cannot be read to
 * "<path>.corrupt-<unix seconds>", so that nothing in it is lost, and
 * returns that name (malloc'd), or NULL with why. */
char *ckpt_set_aside(const char *path, char *why, size_t n);

#endif
