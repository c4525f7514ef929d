#!/usr/bin/env python3
"""Rebuild material-symbols.txt from the @material-symbols/svg-400 npm tarball.

Usage (from this directory):

    npm pack @material-symbols/svg-400@0.48.2 --pack-destination /tmp
    python3 extract.py /tmp/material-symbols-svg-400-0.48.2.tgz > material-symbols.txt

Reads `package/outlined/<source>.svg` straight from the tarball (nothing is unpacked), checks that
every icon uses the expected viewBox and has no fill-rule/transform attributes, merges all <path d>
of an icon into one path data string and prints `key<TAB>path data` lines sorted by key.
"""

import json
import re
import sys
import tarfile

STYLE = "outlined"
VIEW_BOX = "0 -960 960 960"

# Our key -> source file name (without .svg) in package/<STYLE>/. Filled variants are `*-fill`.
# Keys that differ from the source name are icons Material Symbols renamed or never had.
ICONS = {name: name for name in """
    accessibility account_circle add apps apps_outage archive arrow_back arrow_back_ios_new
    arrow_forward attach_file backspace backup battery_full block bluetooth calendar_today call
    change_history chat chat_bubble check check_circle chevron_right circle close contacts
    content_copy crop_square dark_mode data_usage delete devices display_settings edit event
    favorite filter_list group help history home image info keyboard_backspace keyboard_return
    language light_mode location_off location_on lock mail mark_email_read menu mic more_vert nfc
    notifications open_in_new palette person person_add photo_camera play_arrow refresh schedule
    search send settings share shield shift signal_cellular_4_bar sms sort star storage sync
    text_fields translate tune visibility volume_up wifi
    alarm alarm_add snooze timer hourglass_empty av_timer public folder folder_open
    create_new_folder drive_file_move description picture_as_pdf music_note movie download inbox
    drafts reply reply_all forward label photo_library photo edit_note note_add notes pause stop
    flag chevron_left calendar_month today checklist check_box check_box_outline_blank more_horiz
    undo restore_from_trash mark_email_unread camera flip_camera_android photo_camera_back
    video_library grid_view view_list cloud_download attachment format_list_bulleted title
    timer_off bedtime add_circle remove location_city schedule_send unarchive report
    person_search sell rotate_right crop brightness_6 filter_vintage
""".split()}
ICONS.update({
    "star_fill": "star-fill",
    "favorite_fill": "favorite-fill",
    "phone": "call",  # Material Icons `phone` is the handset Material Symbols calls `call`
    "expand_more": "keyboard_arrow_down",  # renamed in Material Symbols (same chevron)
    "smartphone": "mobile",  # renamed in Material Symbols
    "airplanemode_active": "flight",  # renamed in Material Symbols (same plane)
    "battery_saver": "battery_plus",  # Material Icons battery_saver is a battery with a plus
})

SVG_RE = re.compile(r'^<svg xmlns="http://www.w3.org/2000/svg" width="48" height="48" viewBox="([^"]*)">(.*)</svg>\s*$', re.S)
PATH_RE = re.compile(r'<path d="([^"]*)"/>')


def main(tarball: str) -> None:
    with tarfile.open(tarball) as tar:
        meta = json.load(tar.extractfile("package/package.json"))
        lines = []
        for key, source in sorted(ICONS.items()):
            svg = tar.extractfile(f"package/{STYLE}/{source}.svg").read().decode()
            m = SVG_RE.match(svg)
            if not m or m.group(1) != VIEW_BOX:
                sys.exit(f"{source}.svg: unexpected svg header")
            body = m.group(2)
            paths = PATH_RE.findall(body)
            if not paths or PATH_RE.sub("", body).strip():
                sys.exit(f"{source}.svg: unexpected elements or attributes: {body[:200]}")
            lines.append(f"{key}\t{''.join(paths)}")
    print(f"# Material Symbols icon outlines: {meta['name']}@{meta['version']} ({meta['license']}),")
    print(f"# {meta['repository']['url']} (directory {meta['repository']['directory']}).")
    print(f"# Style: {STYLE}, weight 400, optical size 48, grade 0. Filled variants end in _fill.")
    print(f"# viewBox: {VIEW_BOX} (y grows downwards, glyphs lie in y -960..0). Fill rule: nonzero.")
    print("# License: Apache License 2.0, see LICENSE. Regenerate with extract.py (see README.md).")
    renamed = ", ".join(f"{k}={v}" for k, v in sorted(ICONS.items()) if k != v and v != k.replace("_fill", "-fill"))
    print(f"# Keys that differ from the source file name: {renamed}.")
    print("# Format: name<TAB>SVG path data")
    for line in lines:
        print(line)


if __name__ == "__main__":
    main(sys.argv[1])
