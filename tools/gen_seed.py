#!/usr/bin/env python3
"""Deterministic seed data for the simulated apps (Python 3.11, standard library only).

    python3 tools/gen_seed.py            # from the repository root; rewrites the files below

Writes:
    apps/contacts/seed.sql   contacts (fictional people and businesses)
    apps/messages/seed.sql   SMS threads and messages; many threads use phone numbers from the
                             Contacts seed, the rest are unknown numbers and short codes

Running it twice gives byte-identical files: every app has its own `random.Random(<fixed seed>)`,
nothing reads the host clock, and every timestamp is derived from the phone's virtual clock start
(2026-03-02 09:00:00 UTC = 1772442000000 ms), always *before* it.

All content is fictional: names are random pairs from diverse first/last name pools, phone numbers
are in the 555-01xx range reserved for fiction, e-mail addresses and links are at example.com /
example.org / example.net, companies are the well-known fictional sample companies (Contoso,
Fabrikam, Northwind, ...), short codes are 555xx.

Organisation: one section per app (`contacts_seed()`, `messages_seed()`), each returning the SQL
text; `main()` writes them. Another app's seed goes in its own function with its own RNG so adding
it never changes the existing files. The Messages seed reads the Contacts *data* (not the SQL file)
by calling `contacts_people()`, so the two stay consistent.
"""

from __future__ import annotations

import random
import sys
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# The phone's virtual clock starts here (docs/app-format.md); all seed times are before it.
CLOCK_START = datetime(2026, 3, 2, 9, 0, 0, tzinfo=UTC)
CLOCK_START_MS = 1772442000000
assert int(CLOCK_START.timestamp() * 1000) == CLOCK_START_MS

MINUTE = timedelta(minutes=1)


def ms(dt: datetime) -> int:
    """Milliseconds since the Unix epoch."""
    return int(dt.timestamp() * 1000)


def sql_value(v: object) -> str:
    """An SQL literal: NULL, an integer, or a single-quoted string with quotes doubled."""
    if v is None:
        return "NULL"
    if isinstance(v, bool):
        return "1" if v else "0"
    if isinstance(v, int):
        return str(v)
    return "'" + str(v).replace("'", "''") + "'"


def insert_rows(table: str, columns: list[str], rows: list[list[object]]) -> str:
    """One INSERT statement per row (easy to read and diff)."""
    cols = ", ".join(columns)
    out = []
    for row in rows:
        vals = ", ".join(sql_value(v) for v in row)
        out.append(f"INSERT INTO {table} ({cols}) VALUES ({vals});")
    return "\n".join(out) + "\n"


# ---------------------------------------------------------------------------------------------
# Contacts
# ---------------------------------------------------------------------------------------------

CONTACTS_SEED = 20260302

# Initials are ASCII letters so that every person lands in an A–Z section of the list.
FIRST_NAMES = [
    "Aaliyah", "Aarav", "Adebayo", "Aiko", "Alejandro", "Amara", "Andrei", "Astrid", "Beatriz",
    "Benjamin", "Camila", "Chloe", "Daniel", "Dmitri", "Elena", "Emeka", "Farah", "Felix", "Grace",
    "Hana", "Hassan", "Ingrid", "Isabel", "Jamal", "Javier", "Jin", "Kai", "Kavya", "Keisha",
    "Kenji", "Lars", "Leila", "Liam", "Malik", "Marcus", "Mateo", "Mei", "Nadia", "Naomi",
    "Nikhil", "Noah", "Olga", "Omar", "Priya", "Quentin", "Rafael", "Rosa", "Ryan", "Sakura",
    "Samuel", "Sofia", "Tariq", "Thandiwe", "Tomas", "Uchenna", "Valentina", "Victor", "Yara",
    "Yusuf", "Zainab", "Zoe", "Ethan", "Hannah", "Oliver", "Ava", "Diego", "Ines", "Kwame",
]
LAST_NAMES = [
    "Abara", "Alvarez", "Andersen", "Bakshi", "Barros", "Bianchi", "Castillo", "Chowdhury",
    "Costa", "Dubois", "Eriksson", "Fischer", "Garcia", "Haddad", "Hoang", "Ibrahim", "Ito",
    "Jensen", "Kaur", "Kim", "Kowalski", "Kuznetsov", "Lindqvist", "Mensah", "Moreau", "Nakamura",
    "Novak", "Okafor", "Oliveira", "Osei", "Park", "Patel", "Petrov", "Quinn", "Rahman", "Reyes",
    "Rossi", "Sato", "Schmidt", "Singh", "Sokol", "Tanaka", "Torres", "Tran", "Usman", "Varga",
    "Wagner", "Walsh", "Nguyen", "Yilmaz", "Zhou", "Brennan", "Delgado", "Farouk", "Holm",
]
COMPANIES = [
    "Contoso", "Fabrikam", "Northwind Traders", "Tailspin Toys", "Wingtip Toys",
    "Adventure Works", "Litware", "Proseware", "Woodgrove Bank", "Alpine Ski House",
    "Coho Winery", "Fourth Coffee", "Lamna Healthcare", "Margie's Travel", "Trey Research",
    "Blue Yonder Airlines", "Relecloud", "Wide World Importers",
]
JOB_TITLES = [
    "Product Manager", "Software Engineer", "Nurse Practitioner", "Account Executive",
    "Graphic Designer", "Barista", "Operations Lead", "Data Analyst", "Pilot", "Sommelier",
    "Travel Agent", "Research Scientist", "Sales Associate", "HR Coordinator", "Architect",
]
# Area codes are real, but 555-0100..555-0199 is reserved for fictional use in every area.
AREA_CODES = ["206", "312", "415", "503", "617", "720"]
STREETS = [
    "Alder Lane", "Birch Street", "Cedar Avenue", "Dogwood Court", "Elm Street", "Fir Road",
    "Harbor View Drive", "Juniper Way", "Lakeshore Boulevard", "Maple Street", "Oak Terrace",
    "Pine Hollow Road", "Quarry Lane", "Riverside Drive", "Sycamore Place", "Willow Bend",
]
CITIES = [
    ("Riverton", "WA", "98104"), ("Lakeview", "IL", "60613"), ("Fairhaven", "MA", "02719"),
    ("Cedar Falls", "OR", "97205"), ("Millbrook", "CO", "80203"), ("Brookside", "CA", "94110"),
]
NOTES = [
    "Met at the Lakeview book club.",
    "Allergic to peanuts.",
    "Gate code 4821#",
    "Plays five-a-side soccer on Thursdays.",
    "Prefers texts over calls.",
    "Neighbor, apartment 3B. Has a spare key.",
    "Kids: Maya and Leo.",
    "Vegetarian.",
    "Former coworker from the Contoso days.",
    "Dog's name is Biscuit.",
]

# People and places the Messages seed needs by name; everyone else is random.
FIXED_PEOPLE = [
    # first, last, nickname-only display (business / family entries use first only)
    ("Mom", ""),
    ("Lucia", "Fernandez"),  # Spanish-language thread
    ("Wei", "Zhang"),  # Chinese-language thread
]
BUSINESSES = [
    # display name, company, phone area, email, address, notes
    ("Riverbend Dental", "Riverbend Dental", "reception@riverbend-dental.example.com",
     "220 Harbor View Drive, Riverton, WA 98104", "Dr. Okafor. Cleanings every 6 months."),
    ("Maple Street Pharmacy", "Maple Street Pharmacy", "", "14 Maple Street, Riverton, WA 98104", ""),
    ("Sunrise Auto Repair", "Sunrise Auto Repair", "service@sunrise-auto.example.org",
     "901 Quarry Lane, Riverton, WA 98104", "Ask for Tomas."),
]
N_PEOPLE = 56  # random people, in addition to FIXED_PEOPLE and BUSINESSES


@dataclass
class Contact:
    id: int
    first_name: str
    last_name: str
    display_name: str
    phone: str
    phone_label: str
    email: str
    company: str
    job_title: str
    address: str
    birthday: str
    notes: str
    starred: int
    created_at: int


def contacts_people() -> list[Contact]:
    """The contacts, in id order. Deterministic; also used by the Messages seed."""
    rng = random.Random(CONTACTS_SEED)
    # Numbers used by the Messages seed for strangers are never given to a contact.
    reserved = {("415", 187), ("720", 142), ("312", 163)}
    numbers = [(a, n) for a in AREA_CODES for n in range(100, 200) if (a, n) not in reserved]
    rng.shuffle(numbers)
    numbers_iter = iter(numbers)

    def phone() -> str:
        area, n = next(numbers_iter)
        return f"({area}) 555-{n:04d}"

    names: list[tuple[str, str]] = list(FIXED_PEOPLE)
    seen = {f"{f} {l}".strip() for f, l in names}
    while len(names) < len(FIXED_PEOPLE) + N_PEOPLE:
        f, l = rng.choice(FIRST_NAMES), rng.choice(LAST_NAMES)
        # one first name per person keeps "text Priya" tasks unambiguous
        if f"{f} {l}" in seen or any(f == g for g, _ in names):
            continue
        seen.add(f"{f} {l}")
        names.append((f, l))

    start = CLOCK_START - timedelta(days=3 * 365)
    out: list[Contact] = []
    for first, last in names:
        display = f"{first} {last}".strip()
        domain = rng.choice(["example.com", "example.com", "example.org", "example.net"])
        email = ""
        if last and rng.random() < 0.7:
            style = rng.randrange(3)
            local = [f"{first}.{last}", f"{first[0]}{last}", f"{first}{rng.randrange(10, 99)}"][style]
            email = f"{local.lower()}@{domain}"
        company = job = ""
        if last and rng.random() < 0.4:
            company = rng.choice(COMPANIES)
            job = rng.choice(JOB_TITLES) if rng.random() < 0.7 else ""
            if company and rng.random() < 0.5:  # work address at the company
                email = f"{first.lower()}.{last.lower()}@{company.lower().replace(' ', '').replace(chr(39), '')}.example.com"
        address = ""
        if rng.random() < 0.25:
            city, state, zip_code = rng.choice(CITIES)
            address = f"{rng.randrange(12, 4800)} {rng.choice(STREETS)}, {city}, {state} {zip_code}"
        birthday = ""
        if rng.random() < 0.35:
            d = datetime(1955, 1, 1) + timedelta(days=rng.randrange(0, 50 * 365))
            birthday = d.strftime("%Y-%m-%d")
        notes = rng.choice(NOTES) if rng.random() < 0.2 else ""
        created = start + timedelta(minutes=rng.randrange(0, 3 * 365 * 24 * 60))
        out.append(Contact(
            id=len(out) + 1, first_name=first, last_name=last, display_name=display,
            phone=phone(), phone_label=rng.choice(["Mobile"] * 5 + ["Home", "Work"]),
            email=email, company=company, job_title=job, address=address, birthday=birthday,
            notes=notes, starred=0, created_at=ms(created),
        ))
    # The family entry: mobile, a birthday, no e-mail.
    mom = out[0]
    mom.phone_label, mom.birthday, mom.email, mom.company, mom.job_title = "Mobile", "1964-03-08", "", "", ""
    for name, company, email, address, notes in BUSINESSES:
        created = start + timedelta(minutes=rng.randrange(0, 3 * 365 * 24 * 60))
        out.append(Contact(
            id=len(out) + 1, first_name=name, last_name="", display_name=name, phone=phone(),
            phone_label="Work", email=email, company=company, job_title="", address=address,
            birthday="", notes=notes, starred=0, created_at=ms(created),
        ))
    # ~8 favourites: Mom plus seven random people (not businesses).
    for c in [out[0]] + rng.sample(out[1:len(names)], 7):
        c.starred = 1
    return out


def contacts_seed() -> str:
    people = contacts_people()
    cols = ["id", "first_name", "last_name", "display_name", "phone", "phone_label", "email",
            "company", "job_title", "address", "birthday", "notes", "starred", "created_at",
            "updated_at"]
    rows = [[c.id, c.first_name, c.last_name, c.display_name, c.phone, c.phone_label, c.email,
             c.company, c.job_title, c.address, c.birthday, c.notes, c.starred, c.created_at,
             c.created_at] for c in people]
    header = ("-- Generated by tools/gen_seed.py; do not edit by hand.\n"
              f"-- {len(rows)} fictional contacts ({sum(c.starred for c in people)} favorites).\n")
    return header + insert_rows("contacts", cols, rows)


# ---------------------------------------------------------------------------------------------
# Messages
# ---------------------------------------------------------------------------------------------

MESSAGES_SEED = 7340

PLACES = ["Blue Fern Cafe", "Harbor Street Grill", "Marigold Thai", "The Copper Kettle",
          "Pho Corner", "Luna Trattoria", "Fourth Coffee on 5th", "Golden Dumpling House"]
DAYS = ["Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]
TIMES = ["6:30", "7", "7:30", "8", "12:15", "1"]
BANDS = ["The Paper Lanterns", "Midnight Orchard", "Static Bloom", "The Velvet Ferns"]
VENUES = ["the Riverside Amphitheater", "the Lakeview Ballroom", "Hollow Pine Hall"]
BOOKS = ["Salt and Starlight", "The Cartographer's Apprentice", "A Winter in Fairhaven",
         "Notes from the Tideline"]
ITEMS = ["camping tent", "drill", "blue cooler", "slow cooker", "hiking poles", "board game"]
STREETS_SHORT = ["Alder Lane", "Juniper Way", "Sycamore Place", "Elm Street"]

# Conversation scripts: lists of (direction, text); ">" = I sent it, "<" = I received it.
# "~" on its own starts a later burst (hours to a day later). Placeholders are filled per thread.
SCRIPTS: dict[str, list[tuple[str, str]]] = {
    "dinner": [
        ("<", "Are we still on for dinner {day}?"),
        (">", "Yes! {place} at {time}?"),
        ("<", "Perfect, I'll book a table for 4"),
        (">", "Great, see you there"),
        ("~", ""),
        ("<", "They moved us to {time2}, hope that's ok"),
    ],
    "late": [
        (">", "Running about 10 min late, sorry!"),
        ("<", "No worries, I grabbed us a spot by the window"),
        (">", "You're the best"),
    ],
    "moving": [
        ("<", "Any chance you could help me move on Saturday? I'll pay in pizza 🍕"),
        (">", "Sure, what time?"),
        ("<", "9am? The new place is on {street}"),
        (">", "I'll be there. Need me to bring the {item}?"),
        ("<", "Yes please!"),
    ],
    "bookclub": [
        ("<", "Reminder: book club is at {place} this {day}, we're discussing {book}"),
        (">", "Thanks! Halfway through, no spoilers please"),
        ("<", "Haha my lips are sealed 🤐"),
    ],
    "party": [
        ("<", "Planning a surprise party for {friend} on {day}. Can you bring chips and dip?"),
        (">", "Count me in. Does {friend} suspect anything?"),
        ("<", "Not a clue 🤫"),
        ("<", "Arrive by 6:45, the guest of honor shows up at 7"),
        (">", "Got it"),
    ],
    "carpool": [
        ("<", "Can you pick up the kids from soccer practice at {time}? I'm stuck at work"),
        (">", "Yes, no problem"),
        ("<", "You're a lifesaver. They're at the north field"),
        ("~", ""),
        (">", "Got them, heading home now"),
        ("<", "Thank you!!"),
    ],
    "borrowed": [
        (">", "Hey, do you still have my {item}? Need it this weekend"),
        ("<", "Oh yes! Sorry, I'll drop it off tomorrow"),
        (">", "No rush, Friday is fine"),
    ],
    "concert": [
        ("<", "I got 2 tickets for {band} at {venue} on {day}! Want to come?"),
        (">", "YES 🎉 How much do I owe you?"),
        ("<", "$45, whenever"),
        (">", "Sending it now"),
        ("<", "Got it, thanks!"),
    ],
    "airport": [
        ("<", "Landing at {time} tomorrow, terminal B"),
        (">", "I'll be at arrivals"),
        ("~", ""),
        ("<", "Just landed ✈️"),
        (">", "Pulling up now, silver hatchback"),
    ],
    "bill": [
        ("<", "Electric bill came in: $86.40 total, so $43.20 each"),
        (">", "Sent you my half"),
        ("<", "Got it, thanks!"),
    ],
    "shift": [
        ("<", "Could you swap shifts with me on {day}? I have a dentist appointment"),
        (">", "I can do the morning one if you take my Sunday"),
        ("<", "Deal, I'll tell the manager"),
    ],
    "coffee": [
        (">", "Coffee this week?"),
        ("<", "{day} at {place}? 8:30?"),
        (">", "Works for me"),
    ],
    "vet": [
        ("<", "Biscuit's checkup went fine, the vet says he needs to lose a little weight 😅"),
        (">", "Ha, fewer treats then"),
        ("<", "Tell that to Biscuit"),
    ],
    "recipe": [
        ("<", "What was the name of that lasagna recipe you made?"),
        (">", "It's this one: https://recipes.example.com/lasagna-classic (add extra basil)"),
        ("<", "Thank you!!"),
    ],
    "gym": [
        ("<", "Gym tomorrow at 6:30?"),
        (">", "Ugh fine. See you there 💪"),
    ],
    "photos": [
        ("<", "Here are the photos from the hike: https://photos.example.org/album/ridge-trail"),
        (">", "These are great! The one at the summit is my favorite"),
    ],
    "wifi": [
        (">", "What's the wifi password again?"),
        ("<", "It's maple-river-42"),
        (">", "Thanks"),
    ],
    "slides": [
        ("<", "Can you review the slides before the 2pm meeting?"),
        (">", "On it, will send comments by noon"),
        ("<", "Thanks! The budget numbers are on slide 7"),
    ],
    "gamenight": [
        ("<", "Game night at mine on {day}, 7pm. Bring a snack!"),
        (">", "I'll bring nachos"),
        ("<", "Perfect. We're playing {item2} again 😄"),
    ],
    "keys": [
        ("<", "Did I leave my keys at your place?"),
        (">", "Yes, they're on the kitchen counter"),
        ("<", "Phew. Can I grab them after work?"),
        (">", "Sure, I'm home after 6"),
    ],
    "hike": [
        (">", "Want to hike Ridge Trail on {day}?"),
        ("<", "Only if we start early. 8am at the trailhead?"),
        (">", "Deal. I'll bring snacks"),
    ],
    "thanks": [
        ("<", "Thanks again for dinner last night, it was lovely"),
        (">", "Anytime! Let's do it again soon"),
    ],
}

MOM_SCRIPT = [
    ("<", "Did you get home ok?"),
    (">", "Yes, all good. Thanks for lunch!"),
    ("<", "Love you ❤️"),
    ("~", ""),
    ("<", "Don't forget Aunt Rosa's birthday is on Sunday"),
    (">", "I won't, I already got her a card"),
    ("~", ""),
    ("<", "Call me when you have a minute, nothing urgent"),
]
SPANISH_SCRIPT = [
    ("<", "¡Hola! ¿Vienes a la cena del sábado?"),
    (">", "¡Sí! ¿Llevo algo?"),
    ("<", "Trae postre si puedes 😊"),
    (">", "Perfecto, nos vemos a las 8"),
]
CHINESE_SCRIPT = [
    ("<", "明天下午三点开会，别忘了带资料。"),
    (">", "好的，收到！"),
    ("<", "谢谢 🙏"),
]

# Unknown numbers and short codes: (address, fallback name, script). Short codes have no contact.
OTHER_THREADS: list[tuple[str, list[tuple[str, str]]]] = [
    ("55501", [
        ("<", "Your Contoso verification code is 618 204. It expires in 10 minutes. Don't share this code with anyone."),
        ("~", ""),
        ("<", "Your Contoso verification code is 907 351. It expires in 10 minutes. Don't share this code with anyone."),
        ("~", ""),
        ("<", "Your Contoso verification code is {code}. It expires in 10 minutes. Don't share this code with anyone."),
    ]),
    ("55512", [
        ("<", "Parcelly: Your order from Wide World Importers has shipped. Track it at https://parcelly.example.com/t/PX4829107"),
        ("~", ""),
        ("<", "Parcelly: Your package PX4829107 is out for delivery today."),
        ("<", "Parcelly: Delivered! Your package PX4829107 was left at the front door at 2:14 PM."),
    ]),
    ("55523", [
        ("<", "Woodgrove Bank: A purchase of $42.18 at Fourth Coffee was approved on card ending 4821. Not you? Call 1-800-555-0199."),
        ("~", ""),
        ("<", "Woodgrove Bank: A purchase of $129.00 at Alpine Ski House was approved on card ending 4821. Not you? Call 1-800-555-0199."),
    ]),
    ("55534", [
        ("<", "Maple Street Pharmacy: Your prescription is ready for pickup. Reply STOP to opt out."),
    ]),
    ("55545", [
        ("<", "Blue Yonder Airlines: Booking confirmed! Flight BY 482 to Denver on Mar 6, departing 10:25 AM. Confirmation code QX7RTL."),
        ("~", ""),
        ("<", "Blue Yonder Airlines: Add a bag or choose your seat for flight BY 482 at https://blueyonder.example.com/manage"),
    ]),
    ("55556", [
        ("<", "Lamna Healthcare: Reminder of your appointment with Dr. Sato on Mar 4 at 3:30 PM. Reply C to confirm or R to reschedule."),
        (">", "C"),
        ("<", "Thank you, your appointment is confirmed."),
    ]),
    ("(415) 555-0187", [
        ("<", "Hi, is this Jordan? It's Pat from the open house on Saturday"),
        (">", "Sorry, wrong number!"),
        ("<", "Oh sorry about that! Have a good one 🙂"),
    ]),
    ("(720) 555-0142", [
        ("<", "Hi! This is Riley, the dog walker from the Lakeview community board. Do you still need someone for Tuesdays and Thursdays?"),
        ("<", "My rate is $20 per walk. References available at https://riley-walks.example.net"),
    ]),
    ("55567", [
        ("<", "Relecloud: Your monthly statement is ready. Amount due: $64.99 by Mar 10. View it at https://relecloud.example.com/bill"),
    ]),
    ("55578", [
        ("<", "Alpine Ski House: Spring passes are 20% off through Sunday! Shop at https://alpineskihouse.example.com/spring Reply STOP to unsubscribe."),
    ]),
    ("(312) 555-0163", [
        ("<", "Hi, this is Sam from Sunrise Auto Repair. Your car is ready, the total came to $318.75. We're open until 6."),
        (">", "Thanks, I'll pick it up around 5"),
        ("<", "Sounds good, see you then"),
    ]),
]


def fill(text: str, rng: random.Random, vals: dict[str, str]) -> str:
    return text.format(**vals)


def messages_seed() -> str:
    rng = random.Random(MESSAGES_SEED)
    people = contacts_people()
    by_name = {c.display_name: c for c in people}
    persons = [c for c in people if c.last_name]  # not Mom, not businesses
    starred = [c for c in persons if c.starred]
    others = [c for c in persons if not c.starred and c.display_name not in
              ("Lucia Fernandez", "Wei Zhang")]

    # Conversation partners: Mom, the Spanish and Chinese speakers, every favourite, and enough
    # other people to make 22 contact threads.
    partners = [by_name["Mom"], by_name["Lucia Fernandez"], by_name["Wei Zhang"]]
    partners += [c for c in starred if c not in partners]
    partners += rng.sample(others, 22 - len(partners))

    # Scripts are dealt from a shuffled deck, reshuffled when it runs out, so the same
    # conversation does not recur in many threads.
    deck: list[str] = []

    def deal() -> str:
        if not deck:
            deck.extend(sorted(SCRIPTS))
            rng.shuffle(deck)
        return deck.pop()
    threads: list[tuple[str, str, list[tuple[str, str]]]] = []  # address, name, script
    for c in partners:
        if c.display_name == "Mom":
            script = MOM_SCRIPT
        elif c.display_name == "Lucia Fernandez":
            script = SPANISH_SCRIPT
        elif c.display_name == "Wei Zhang":
            script = CHINESE_SCRIPT
        else:
            picks = []
            for _ in range(rng.choice([1, 2, 2, 3])):
                pick = deal()
                if pick in picks:  # a reshuffle can repeat one within a thread
                    pick = deal()
                picks.append(pick)
            script = []
            for i, p in enumerate(picks):
                if i:
                    script.append(("~", ""))
                script += SCRIPTS[p]
        friend = rng.choice([p.first_name for p in persons if p is not c])
        vals = {
            "day": rng.choice(DAYS), "place": rng.choice(PLACES), "time": rng.choice(TIMES),
            "time2": rng.choice(["8:15", "8:30", "6:45"]), "street": rng.choice(STREETS_SHORT),
            "item": rng.choice(ITEMS), "item2": rng.choice(["Catan", "charades", "Codenames"]),
            "band": rng.choice(BANDS), "venue": rng.choice(VENUES), "book": rng.choice(BOOKS),
            "friend": friend,
        }
        threads.append((c.phone, c.display_name, [(d, fill(t, rng, vals)) for d, t in script]))
    for address, script in OTHER_THREADS:
        vals = {"code": f"{rng.randrange(100, 1000)} {rng.randrange(100, 1000)}"}
        threads.append((address, "", [(d, fill(t, rng, vals)) for d, t in script]))

    # Order of recency: shuffle, then give each thread a last-activity time; the newest few are
    # this morning (before 09:00), the rest spread over the previous four weeks. Texts are only
    # sent between 07:00 and 22:30.
    rng.shuffle(threads)
    # The verification code is the newest message of all (a common "read me the code" task).
    threads.sort(key=lambda t: t[0] != "55501")

    def earlier_daytime(t: datetime) -> datetime:
        """`t` if it is between 07:00 and 22:00, else an earlier evening time (17:00-21:59)."""
        if 7 <= t.hour < 22:
            return t
        day = t - timedelta(days=1) if t.hour < 7 else t
        return day.replace(hour=rng.randrange(17, 22), minute=rng.randrange(60))

    last_times: list[datetime] = []
    t = CLOCK_START - timedelta(minutes=rng.randrange(6, 25))
    for i in range(len(threads)):
        if i:
            if i < 4:  # this morning
                t -= timedelta(minutes=rng.randrange(9, 35))
            else:
                t = earlier_daytime(t - timedelta(minutes=rng.randrange(4 * 60, 30 * 60)))
        last_times.append(t)

    thread_rows = []
    message_rows = []
    msg_id = 0
    unread_budget = {0, 1, 2, 3, 5, 8, 12}  # thread positions whose last incoming burst is unread
    for tid, ((address, name, script), last) in enumerate(zip(threads, last_times), start=1):
        # Walk the script backwards from `last`, so the final message is at `last`.
        times: list[datetime] = []
        cur = last
        for d, _text in reversed(script):
            if d == "~":
                cur = earlier_daytime(cur - timedelta(hours=rng.randrange(5, 40)))
                continue
            times.append(cur)
            cur -= timedelta(minutes=rng.randrange(1, 14), seconds=rng.randrange(0, 60))
        times.reverse()
        msgs = [(d, text, when) for (d, text), when in
                zip([m for m in script if m[0] != "~"], times)]
        # Unread: the trailing incoming messages of selected threads.
        unread_from = len(msgs)
        if tid - 1 in unread_budget:
            while unread_from > max(0, len(msgs) - 2) and msgs[unread_from - 1][0] == "<":
                unread_from -= 1
        created = msgs[0][2] - timedelta(seconds=1)
        thread_rows.append([tid, address, name, ms(created)])
        for i, (d, text, when) in enumerate(msgs):
            msg_id += 1
            outgoing = d == ">"
            read = 0 if i >= unread_from else 1
            status = "delivered" if outgoing else "received"
            message_rows.append([msg_id, tid, text, ms(when), int(outgoing), read, status])
            assert ms(when) < CLOCK_START_MS, (address, text)

    header = ("-- Generated by tools/gen_seed.py; do not edit by hand.\n"
              f"-- {len(thread_rows)} threads, {len(message_rows)} messages.\n")
    return (header
            + insert_rows("threads", ["id", "address", "name", "created_at"], thread_rows)
            + insert_rows("messages", ["id", "thread_id", "body", "sent_at", "outgoing", "read",
                                       "status"], message_rows))


# ---------------------------------------------------------------------------------------------

def main() -> int:
    outputs = {
        ROOT / "apps" / "contacts" / "seed.sql": contacts_seed(),
        ROOT / "apps" / "messages" / "seed.sql": messages_seed(),
    }
    for path, text in outputs.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8", newline="\n")
        print(f"wrote {path.relative_to(ROOT)} ({text.count(chr(10))} lines)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
