#!/usr/bin/env python3
"""Deterministic seed for the Files app (apps/files/seed.sql), the phone's shared file store.

    python3 tools/gen_files_seed.py          # from the repository root

The Files app's `files` table is the store every app that handles files reads or writes
(docs/app-format.md, "Between apps"): Gallery shows its images, Camera adds photos, Mail
attaches from it. Images are drawn from `placeholder:KEY` (a generated picture, so no binary
files are committed). Running it twice gives byte-identical output: one `random.Random` with a
fixed seed, every time derived from the phone's clock start (2026-03-02 09:00:00 UTC), before it.
All names and contents are fictional.
"""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CLOCK_START = datetime(2026, 3, 2, 9, 0, 0, tzinfo=UTC)

rng = random.Random(20260302)
rows: list[tuple] = []  # (id, parent_id, name, is_dir, mime, size, modified_ms, image, body, starred)


def ms(t: datetime) -> int:
    return int(t.timestamp() * 1000)


def before(days_max: float, days_min: float = 0.05) -> datetime:
    return CLOCK_START - timedelta(seconds=rng.uniform(days_min * 86400, days_max * 86400))


def add(parent: int | None, name: str, *, is_dir=False, mime="", size=0, when=None, image=None, body=None, starred=0) -> int:
    rid = len(rows) + 1
    when = when or before(120)
    rows.append((rid, parent, name, 1 if is_dir else 0, mime, size, ms(when), image, body, starred))
    return rid


def folder(parent: int | None, name: str, days: float = 200) -> int:
    return add(parent, name, is_dir=True, when=before(days, 30))


# Top-level folders of a phone's shared storage.
alarms = folder(None, "Alarms")
dcim = folder(None, "DCIM")
camera = folder(dcim, "Camera", 10)
documents = folder(None, "Documents")
work = folder(documents, "Work", 40)
personal = folder(documents, "Personal", 40)
receipts = folder(documents, "Receipts", 40)
download = folder(None, "Download", 5)
movies = folder(None, "Movies")
music = folder(None, "Music")
pictures = folder(None, "Pictures")
screenshots = folder(pictures, "Screenshots", 8)
wallpapers = folder(pictures, "Wallpapers", 90)
recordings = folder(None, "Recordings", 20)
ringtones = folder(None, "Ringtones")

# Camera photos: IMG_YYYYMMDD_HHMMSS.jpg, a few a day on some days.
scenes = ["beach", "mountain", "city", "forest", "lake", "sunset", "market", "dog", "cat", "cake",
          "concert", "snow", "bridge", "garden", "harbor", "desert", "museum", "bike", "coffee", "train"]
for i in range(34):
    t = before(70, 0.2)
    name = t.strftime("IMG_%Y%m%d_%H%M%S.jpg")
    scene = rng.choice(scenes)
    add(camera, name, mime="image/jpeg", size=rng.randint(1_800_000, 6_400_000), when=t,
        image=f"placeholder:{scene}-{i:02d}", starred=1 if rng.random() < 0.12 else 0)
for i in range(4):
    t = before(40, 1)
    add(camera, t.strftime("VID_%Y%m%d_%H%M%S.mp4"), mime="video/mp4", size=rng.randint(20_000_000, 180_000_000), when=t)
for i in range(9):
    t = before(30, 0.1)
    app = rng.choice(["Messages", "Settings", "Contacts", "Chrome", "Maps", "Calendar"])
    add(screenshots, t.strftime(f"Screenshot_%Y%m%d-%H%M%S_{app}.png"), mime="image/png",
        size=rng.randint(180_000, 900_000), when=t, image=f"placeholder:screen-{app.lower()}-{i}")
for name in ["Alpine_lake.jpg", "Aurora.jpg", "Dunes.jpg", "Kyoto_night.jpg"]:
    add(wallpapers, name, mime="image/jpeg", size=rng.randint(2_000_000, 5_000_000),
        image=f"placeholder:wallpaper-{name.split('.')[0].lower()}")

# Downloads: what people actually download.
downloads = [
    ("Boarding_pass_LH1234_MUC-LIS.pdf", "application/pdf", 184_220),
    ("Invoice_2026-02_Contoso.pdf", "application/pdf", 96_511),
    ("Rechnung_Februar_Stadtwerke.pdf", "application/pdf", 121_904),
    ("Facture_EDF_fevrier_2026.pdf", "application/pdf", 88_302),
    ("Lease_agreement_signed.pdf", "application/pdf", 2_412_881),
    ("Northwind_Q1_report.xlsx", "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet", 58_210),
    ("Conference_agenda.docx", "application/vnd.openxmlformats-officedocument.wordprocessingml.document", 41_772),
    ("menu_trattoria_da_luca.pdf", "application/pdf", 733_109),
    ("concert_tickets_2026-03-14.pdf", "application/pdf", 203_555),
    ("recipe_paella_valenciana.txt", "text/plain", 1_204),
    ("train_schedule_Lisboa-Porto.pdf", "application/pdf", 311_820),
    ("photo_from_Wei.jpg", "image/jpeg", 2_950_112),
    ("phonebench-podcast-ep12.mp3", "audio/mpeg", 48_220_991),
    ("IKEA_assembly_KALLAX.pdf", "application/pdf", 5_830_045),
    ("wifi_guest_access.txt", "text/plain", 96),
]
for name, mime, size in downloads:
    t = before(25, 0.1)
    image = f"placeholder:download-{name.split('.')[0].lower()}" if mime.startswith("image/") else None
    body = None
    if name == "recipe_paella_valenciana.txt":
        body = ("Paella valenciana (4 personas)\n\n- 400 g arroz bomba\n- 1 pollo troceado\n- 250 g judía verde\n"
                "- 1 tomate rallado\n- azafrán, pimentón, aceite de oliva\n\nSofreír el pollo 15 min, añadir verduras, "
                "tomate y pimentón; agua y azafrán; arroz 18 min sin remover.")
    if name == "wifi_guest_access.txt":
        body = "Guest Wi-Fi\nNetwork: Fabrikam-Guest\nPassword: tulip-harbor-42\nValid until 31 March"
    add(download, name, mime=mime, size=size if body is None else len(body.encode()), when=t, image=image, body=body)

# Documents.
texts = {
    work: [
        ("Meeting notes 2026-02-24.txt", "Attendees: Amara, Jonas, Priya\n- Launch moved to 16 March\n- Jonas owns the QA plan\n- Next sync: Tuesday 10:00"),
        ("Q1 goals.txt", "1. Ship the onboarding redesign\n2. Cut support tickets by 20%\n3. Hire two engineers"),
        ("Expense report February.xlsx", None),
        ("Project Falcon proposal.docx", None),
        ("会议记录_三月.txt", "三月项目会议\n- 确认预算\n- 下周五前提交设计稿\n- 负责人：王伟"),
    ],
    personal: [
        ("Shopping list.txt", "Milk\nEggs\nSourdough bread\nTomatoes\nParmesan\nCoffee beans"),
        ("Packing list Lisbon.txt", "Passport\nCharger\nSunglasses\nRain jacket\nAdapter (EU)\nSwimsuit"),
        ("Gift ideas.txt", "Mum: gardening gloves\nLeo: LEGO set\nSofia: cookbook (Ottolenghi)"),
        ("Car insurance 2026.pdf", None),
        ("Passport scan.jpg", None),
        ("Lebenslauf_2026.pdf", None),
    ],
    receipts: [
        ("Receipt_Northwind_Traders_2026-02-11.pdf", None),
        ("Receipt_Fabrikam_Electronics_2026-01-29.pdf", None),
        ("Ticket_Boulangerie_Paul.jpg", None),
        ("Recibo_Farmacia_Central.pdf", None),
    ],
}
mimes = {".txt": "text/plain", ".pdf": "application/pdf", ".jpg": "image/jpeg",
         ".docx": "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
         ".xlsx": "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"}
for parent, items in texts.items():
    for name, body in items:
        ext = name[name.rfind("."):]
        mime = mimes[ext]
        size = len(body.encode()) if body else rng.randint(30_000, 1_500_000)
        image = f"placeholder:doc-{name.split('.')[0].lower().replace(' ', '-')}" if mime.startswith("image/") else None
        add(parent, name, mime=mime, size=size, when=before(60, 0.3), image=image, body=body,
            starred=1 if name in ("Shopping list.txt", "Q1 goals.txt") else 0)

for name in ["Morning Glory.ogg", "Sunrise Chime.ogg"]:
    add(alarms, name, mime="audio/ogg", size=rng.randint(80_000, 400_000))
for artist, title in [("The Lumineers", "Ho Hey"), ("Rosalía", "Malamente"), ("Stromae", "Papaoutai"),
                      ("Daft Punk", "Get Lucky"), ("Norah Jones", "Don't Know Why"), ("Jay Chou", "晴天")]:
    add(music, f"{artist} - {title}.mp3", mime="audio/mpeg", size=rng.randint(3_000_000, 9_000_000))
for i in range(5):
    t = before(20, 0.5)
    add(recordings, t.strftime("Recording %Y-%m-%d %H.%M.m4a"), mime="audio/mp4", size=rng.randint(200_000, 12_000_000), when=t)
add(movies, "Holiday_Portugal_2025.mp4", mime="video/mp4", size=812_440_113)
add(ringtones, "Old phone.ogg", mime="audio/ogg", size=144_002)


def sql_text(v) -> str:
    if v is None:
        return "NULL"
    if isinstance(v, int):
        return str(v)
    return "'" + str(v).replace("'", "''") + "'"


lines = ["-- Generated by tools/gen_files_seed.py: do not edit by hand.",
         "INSERT INTO files (id, parent_id, name, is_dir, mime, size, modified_at, image, body, starred) VALUES"]
values = [f"  ({', '.join(sql_text(v) for v in row)})" for row in rows]
lines.append(",\n".join(values) + ";")
(ROOT / "apps/files/seed.sql").write_text("\n".join(lines) + "\n", encoding="utf-8")
print(f"apps/files/seed.sql: {len(rows)} files and folders")
