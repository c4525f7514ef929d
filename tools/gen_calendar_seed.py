#!/usr/bin/env python3
"""Writes apps/calendar/seed.sql: three calendars and about forty events from February to April
2026 around the default clock start (Monday 2026-03-02 09:00 UTC). Times are UTC, the phone's zone.
Run from the repository root: python3 tools/gen_calendar_seed.py
"""
from datetime import datetime, timezone


def ms(day: str, hm: str) -> int:
    return int(datetime.fromisoformat(f"{day}T{hm}:00").replace(tzinfo=timezone.utc).timestamp() * 1000)


def q(s):
    return "NULL" if s is None else "'" + str(s).replace("'", "''") + "'"


CAL = {"Personal": 1, "Work": 2, "Family": 3}
# (calendar, title, day, start, end, location, description, reminder minutes, guests, all-day end day)
EVENTS = [
    ("Work", "Team stand-up", "2026-03-02", "09:30", "09:45", "Room 2A", "", 10, "lucia.fernandez@relecloud.example.com", None),
    ("Work", "1:1 with Olga", "2026-03-02", "11:00", "11:30", "Olga's office", "Analyst hiring", 10, "olga.yilmaz@treyresearch.example.com", None),
    ("Personal", "Lunch with Kavya", "2026-03-02", "12:30", "13:30", "Cafe Lumen", "", 30, "kavya.novak@example.com", None),
    ("Work", "Supplier call", "2026-03-02", "15:00", "15:30", "Video call", "Tailspin Toys pricing", 10, "hassan.usman@tailspintoys.example.com", None),
    ("Personal", "Yoga", "2026-03-03", "07:00", "08:00", "Pulse Fitness", "", 30, "", None),
    ("Work", "Budget review", "2026-03-03", "10:00", "11:30", "Room 3C", "Q2 budget, bring the forecast", 15, "farah.okafor@litware.example.com", None),
    ("Family", "Parents' evening", "2026-03-03", "18:00", "19:00", "Alder Lane School", "Leo's class", 60, "beatriz.kuznetsov@example.org", None),
    ("Work", "Design critique", "2026-03-04", "14:00", "15:00", "Room 4B", "", 10, "", None),
    ("Personal", "Pick up parcel", "2026-03-04", "17:30", "18:00", "Northwind Express depot", "Order #48213", None, "", None),
    ("Work", "Quarterly report due", "2026-03-06", "00:00", "00:00", "", "Send section 3 to Farah", None, "", "2026-03-06"),
    ("Personal", "Dinner with Naomi", "2026-03-07", "19:30", "22:00", "Pine Street", "Table for four", 60, "naomi.bakshi@adventureworks.example.com, mateo.andersen@example.net", None),
    ("Family", "Grandma's birthday", "2026-03-08", "00:00", "00:00", "", "Call her in the morning", None, "", "2026-03-08"),
    ("Work", "Interview: Priya Raman", "2026-03-09", "10:00", "11:00", "Room 3C", "Analyst role", 15, "olga.yilmaz@treyresearch.example.com", None),
    ("Work", "Interview: Jonas Berg", "2026-03-09", "13:30", "14:30", "Room 3C", "Analyst role", 15, "olga.yilmaz@treyresearch.example.com", None),
    ("Personal", "Dentist", "2026-03-10", "08:15", "09:00", "Riverbend Dental", "Check-up with Dr. Walsh", 60, "", None),
    ("Work", "All-hands", "2026-03-11", "16:00", "17:00", "Auditorium", "", 10, "", None),
    ("Personal", "Flight LX 318 to London", "2026-03-12", "07:25", "08:10", "Zurich Airport", "Booking QX7T2M, seat 14A", 120, "", None),
    ("Work", "London client visit", "2026-03-12", "00:00", "00:00", "London", "", None, "", "2026-03-13"),
    ("Personal", "Symphony", "2026-03-13", "20:00", "22:00", "Concert Hall", "Row F, seats 11-12", 60, "felix.garcia@example.com", None),
    ("Personal", "Wine tasting", "2026-03-14", "18:30", "21:00", "Coho Winery", "", 60, "", None),
    ("Personal", "Gym renewal", "2026-03-15", "00:00", "00:00", "", "$39.00 a month", None, "", "2026-03-15"),
    ("Work", "Sprint planning", "2026-03-16", "10:00", "12:00", "Room 2A", "", 15, "", None),
    ("Family", "Swimming lesson", "2026-03-17", "17:00", "18:00", "City Pool", "Leo", 30, "", None),
    ("Work", "Offsite retro", "2026-03-18", "14:00", "15:30", "Room 4B", "", 10, "samuel.costa@wingtiptoys.example.com", None),
    ("Personal", "Lisbon trip", "2026-03-20", "00:00", "00:00", "Casa do Rio, Lisbon", "Confirmation 77-4410", None, "", "2026-03-22"),
    ("Family", "Leo's birthday party", "2026-03-21", "15:00", "18:00", "12 Alder Lane", "", 120, "beatriz.kuznetsov@example.org", None),
    ("Personal", "Book club", "2026-03-26", "19:00", "21:00", "Ingrid's place", "The Left Hand of Darkness", 60, "ingrid.mensah@example.com", None),
    ("Work", "Invoice INV-2291 due", "2026-03-31", "00:00", "00:00", "", "¥128,000 to Fabrikam", None, "", "2026-03-31"),
    ("Personal", "Car service", "2026-04-02", "08:00", "09:00", "Bayview Motors", "", 60, "", None),
    ("Work", "Board meeting", "2026-04-07", "09:00", "12:00", "Boardroom", "", 30, "", None),
    ("Family", "Easter lunch", "2026-04-05", "12:30", "15:00", "Mum's house", "", 120, "", None),
    ("Personal", "Haircut", "2026-02-27", "17:00", "17:45", "Studio Nine", "", 30, "", None),
    ("Work", "Team offsite", "2026-02-27", "00:00", "00:00", "Lake Pavilion", "", None, "", "2026-02-27"),
    ("Personal", "Movie night", "2026-02-28", "20:00", "22:30", "Roxy Cinema", "", None, "naomi.bakshi@adventureworks.example.com", None),
    ("Work", "Roadmap review", "2026-02-24", "13:00", "14:00", "Room 2A", "", 10, "", None),
    ("Family", "Visit to Grandma", "2026-02-22", "11:00", "16:00", "Maple Court", "", 60, "", None),
]

out = ["-- Generated by tools/gen_calendar_seed.py: edit the script, not this file.", "",
       "INSERT INTO calendars (id, name, color) VALUES (1, 'Personal', 'blue'), (2, 'Work', 'red'), (3, 'Family', 'green');", "",
       "INSERT INTO events (calendar_id, title, start_at, end_at, all_day, location, description, reminder_min, guests) VALUES"]
rows = []
for cal, title, day, start, end, loc, desc, rem, guests, allday_end in EVENTS:
    if allday_end:
        s, e, a = ms(day, "00:00"), ms(allday_end, "00:00") + 86_400_000, 1
    else:
        s, e, a = ms(day, start), ms(day, end), 0
    rows.append(f"  ({CAL[cal]}, {q(title)}, {s}, {e}, {a}, {q(loc)}, {q(desc)}, {rem if rem is not None else 'NULL'}, {q(guests)})")
out.append(",\n".join(rows) + ";")
open("apps/calendar/seed.sql", "w").write("\n".join(out) + "\n")
print(len(EVENTS), "events")
