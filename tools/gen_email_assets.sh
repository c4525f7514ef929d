#!/bin/sh
# Draws the pictures in apps/email/assets/ (committed; rerun only to change them) with
# ImageMagick 6 (`apt-get install imagemagick`): two photos of the team offsite attached to a mail
# (JPEG), a boarding pass (PNG, 16-bit RGBA), and the launcher glyph (SVG, hand-written).
set -eu
cd "$(dirname "$0")/../apps/email/assets"
CV=/usr/bin/convert
$CV -size 480x360 gradient:'#7EC8F0'-'#FFF3D6' \( -size 480x140 gradient:'#2E6F95'-'#1B4560' \) \
  -gravity south -composite -gravity northwest -fill '#6B4A2B' -draw "rectangle 150,250 330,262" \
  -fill '#5A3D22' -draw "rectangle 170,262 178,340 rectangle 300,262 308,340" \
  -fill '#FFD56B' -draw "circle 380,80 380,110" -quality 82 -strip pier.jpg
$CV -size 480x360 gradient:'#A9D8F5'-'#E9F6FF' -fill '#3C7A3E' \
  -draw "polygon 0,230 120,150 240,220 360,140 480,210 480,360 0,360" \
  -fill '#4F9FD1' -draw "rectangle 0,280 480,360" -fill white -draw "circle 90,70 90,95 circle 120,75 120,95" \
  -quality 82 -strip lake.jpg
$CV -size 600x260 xc:white -fill '#0B57D0' -draw "rectangle 0,0 600,56" -font DejaVu-Sans -fill white \
  -pointsize 28 -draw "text 20,38 'BOARDING PASS  LX 318'" -fill '#1F1F1F' -pointsize 22 \
  -draw "text 20,100 'RIVERA / SAM'" -draw "text 20,140 'ZRH to LCY'" -draw "text 20,180 '12 MAR 2026   07:25'" \
  -draw "text 20,220 'SEAT 14A   BOOKING QX7T2M'" \
  -draw "rectangle 470,80 480,230 rectangle 486,80 490,230 rectangle 496,80 506,230 rectangle 512,80 514,230 rectangle 520,80 530,230 rectangle 536,80 540,230 rectangle 546,80 556,230 rectangle 562,80 566,230" \
  -strip boarding_pass.png
