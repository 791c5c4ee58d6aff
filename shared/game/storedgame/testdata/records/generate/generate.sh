#!/bin/sh
# Writes testdata/records/<commit>/ with the records the writer of each
# commit made itself: the game package of that commit, its own test
# helpers and Encode, and the generator beside this script dropped in as
# a test file. Run from the repository root:
#
#	sh shared/game/storedgame/testdata/records/generate/generate.sh
#
# The writers: 7025de5 (formats 1 and 2, the JSON header; c65d0b8 wrote the
# same bytes), bb98be9 (format 1 with the moves section, and byte 3 with
# Zstandard), 8925936 (the text header before rooms, invites and ratings),
# 001fbd3 (the text header as Encode still writes it, byte for byte).
set -eu
here=shared/game/storedgame/testdata/records
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for commit in 7025de5 bb98be9 8925936 001fbd3; do
	mkdir -p "$work/$commit"
	git archive "$commit" go.mod go.sum shared/chess shared/game | tar -x -C "$work/$commit"
	cp "$here/generate/write_test.go.txt" "$work/$commit/shared/game/zz_write_records_test.go"
	states=states_sample_test.go.txt
	[ "$commit" = 001fbd3 ] && states=states_head_test.go.txt
	cp "$here/generate/$states" "$work/$commit/shared/game/zz_states_test.go"
	rm -rf "${here:?}/$commit"
	(cd "$work/$commit" && RECORDS_DIR="$OLDPWD/$here/$commit" go test -count=1 -run TestWriteStoredRecords ./shared/game)
done
# The long games once per form: the current one, DEFLATE (7025de5) and
# the 960 game in the text form; the short games cover the rest.
rm -f "$here"/bb98be9/long-* "$here"/8925936/long-* "$here"/7025de5/long-960.*
