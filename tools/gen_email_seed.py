#!/usr/bin/env python3
"""Writes apps/email/seed.sql: the mailbox of Sam Rivera (sam.rivera@example.com).

Senders are mostly people in Contacts (same names and addresses), so replies, autocomplete and
"who wrote to me" tasks line up across apps. Times are fixed milliseconds before the default
clock start (2026-03-02 09:00 UTC); four mails arrive later, over the morning (`arrives_at`).
Run from the repository root: python3 tools/gen_email_seed.py
"""
from datetime import datetime, timezone, timedelta

START = datetime(2026, 3, 2, 9, 0, tzinfo=timezone.utc)
ME = ("Sam Rivera", "sam.rivera@example.com")


def ms(dt: datetime) -> int:
    return int(dt.timestamp() * 1000)


def ago(days: float = 0, hours: float = 0, minutes: float = 0) -> int:
    return ms(START - timedelta(days=days, hours=hours, minutes=minutes))


def later(minutes: float) -> int:
    return ms(START + timedelta(minutes=minutes))


def q(s: str) -> str:
    return "'" + s.replace("'", "''") + "'"


mails = []        # dicts
attachments = []  # (mail_key, name, mime, size, image, body)


def mail(key, frm, subject, body, at, folder="inbox", to=ME[1], cc="", read=1, starred=0,
         thread=None, arrives=None):
    mails.append(dict(key=key, frm=frm, subject=subject, body=body.strip("\n"), at=at, folder=folder,
                      to=to, cc=cc, read=read, starred=starred, thread=thread or key, arrives=arrives))


LUCIA = ("Lucia Fernandez", "lucia.fernandez@relecloud.example.com")
KENJI = ("Kenji Eriksson", "kenji.eriksson@woodgrovebank.example.com")
SOFIA = ("Sofia Bakshi", "sofia.bakshi@margiestravel.example.com")
ADEBAYO = ("Adebayo Farouk", "adebayo.farouk@margiestravel.example.com")
SAMUEL = ("Samuel Costa", "samuel.costa@wingtiptoys.example.com")
NAOMI = ("Naomi Bakshi", "naomi.bakshi@adventureworks.example.com")
TARIQ = ("Tariq Fischer", "tariq.fischer@cohowinery.example.com")
FARAH = ("Farah Okafor", "farah.okafor@litware.example.com")
HANNAH = ("Hannah Sokol", "hannah.sokol@example.com")
OLGA = ("Olga Yilmaz", "olga.yilmaz@treyresearch.example.com")
JIN = ("Jin Okafor", "jin.okafor@fabrikam.example.com")
INGRID = ("Ingrid Mensah", "ingrid.mensah@example.com")
BEATRIZ = ("Beatriz Kuznetsov", "beatriz.kuznetsov@example.org")
BENJAMIN = ("Benjamin Chowdhury", "benjamin.chowdhury@northwindtraders.example.com")
HASSAN = ("Hassan Usman", "hassan.usman@tailspintoys.example.com")
KAVYA = ("Kavya Novak", "kavya.novak@example.com")
FELIX = ("Felix Garcia", "felix.garcia@example.com")
ELENA = ("Elena Alvarez", "elena.alvarez@proseware.example.com")
SAKURA = ("Sakura Tanaka", "sakura.tanaka@example.com")
MATEO = ("Mateo Andersen", "mateo.andersen@example.net")
SHOP = ("Contoso Shop", "orders@contoso.example.com")
NEWS = ("The Weekly Byte", "news@weeklybyte.example.com")
DENTAL = ("Riverbend Dental", "reception@riverbend-dental.example.com")
SECURITY = ("Fabrikam Account Team", "no-reply@accounts.fabrikam.example.com")
LIBRARY = ("Central Library", "holds@library.example.org")
GYM = ("Pulse Fitness", "hello@pulsefitness.example.com")

mail("kickoff", LUCIA, "Project kickoff on Thursday", """
Hi Sam,

The Relecloud migration kicks off this week. Can you join us on Thursday, March 5 from 14:00 to
15:00 in Room 4B? We'll go over the timeline and who owns what.

Please bring the draft budget.

Thanks,
Lucia""", ago(hours=2, minutes=10), read=0)
mail("kickoff2", LUCIA, "Re: Project kickoff on Thursday", """
Hi again,

Updated agenda: 14:00 intros, 14:15 timeline, 14:40 budget, 14:55 next steps. The room is now
Room 2A (4B was double-booked).

Lucia""", later(4), read=0, thread="kickoff", arrives=later(4))
mail("statement", KENJI, "Your February statement is ready", """
Dear Sam Rivera,

Your Woodgrove Bank statement for February 2026 is ready. Closing balance: $4,218.77.
Minimum payment due March 18: $35.00.

Kenji Eriksson
Client services, Woodgrove Bank""", ago(hours=5), read=0)
mail("flight", SOFIA, "Flight confirmation LX 318, Zurich to London", """
Hello Sam,

Your flight is confirmed.

  Flight LX 318, Zurich (ZRH) to London City (LCY)
  Thursday, 12 March 2026, departs 07:25, arrives 08:10
  Booking reference: QX7T2M
  Seat 14A

Your boarding pass is attached. Check-in closes 40 minutes before departure.

Safe travels,
Sofia Bakshi, Margie's Travel""", ago(days=1, hours=1), starred=1)
attachments.append(("flight", "boarding_pass_LX318.png", "image/png", 35_331, "asset:email/boarding_pass.png", None))
mail("hotel", ADEBAYO, "Hotel booking in Lisbon", """
Hi Sam,

I've booked Casa do Rio in Lisbon for you: check-in Friday, 20 March, check-out Monday,
23 March (3 nights), total €412.50, breakfast included. Confirmation number 77-4410.

Adebayo""", ago(days=1, hours=3))
mail("weekly1", NEWS, "The Weekly Byte: batteries that last a week", """
This week: solid-state batteries reach phones, a tiny e-ink tablet, and five tips to keep your
inbox under control. Read online at weeklybyte.example.com/issue/212.

Unsubscribe: weeklybyte.example.com/u""", ago(days=1, hours=6))
mail("offsite", SAMUEL, "Photos from the team offsite", """
Hi Sam,

Here are my two favourite shots from the offsite at the lake. The one on the pier is going on the
team page, so let me know if you'd rather not be in it!

Samuel""", ago(days=2, hours=2), read=0)
# Real pictures shipped in apps/email/assets/ (tools/gen_email_assets.sh), named `APP/NAME` so
# that Files and Gallery show them too once saved there.
attachments.append(("offsite", "IMG_20260227_101512.jpg", "image/jpeg", 5_587, "asset:email/pier.jpg", None))
attachments.append(("offsite", "IMG_20260227_143020.jpg", "image/jpeg", 5_837, "asset:email/lake.jpg", None))
mail("dinner1", NAOMI, "Dinner on Saturday?", """
Hey Sam! Are you free for dinner on Saturday, March 7? I was thinking of the new Ethiopian place
on Pine Street around 19:30.

Naomi""", ago(days=3, hours=4))
mail("dinner2", ME, "Re: Dinner on Saturday?", """
Sounds great, count me in! Should I book a table?

Sam""", ago(days=3, hours=3), folder="sent", to=NAOMI[1], thread="dinner1")
mail("dinner3", NAOMI, "Re: Dinner on Saturday?", """
Already done: table for four at 19:30 under my name. Mateo and Elena are coming too.

Naomi""", ago(days=3, hours=1), thread="dinner1")
mail("order", SHOP, "Order #48213 confirmed", """
Thank you for your order!

  Order #48213
  1 x Wireless earbuds ........ $59.90
  2 x USB-C cable (1 m) ....... $17.00
  Shipping .................... $9.50
  Total ....................... $86.40

We'll email you when it ships.""", ago(days=3, hours=8))
mail("shipped", SHOP, "Order #48213 has shipped", """
Good news: your order #48213 is on its way with Northwind Express.
Tracking number: NX 5521 8830 17. Expected delivery: Wednesday, March 4.""", later(15), read=0,
     arrives=later(15))
mail("tasting", TARIQ, "Wine tasting invitation", """
Dear Sam,

You're invited to our spring tasting at Coho Winery on Saturday, 14 March, 18:30-21:00.
Tickets are £25 per person; reply to this mail to reserve.

Warm regards,
Tariq Fischer""", ago(days=4, hours=2))
mail("report", FARAH, "Quarterly report draft", """
Hi Sam,

Attached is the Q1 report draft. Could you check the numbers in section 3 by Friday?

Thanks!
Farah""", ago(days=4, hours=5), read=0, starred=1)
attachments.append(("report", "Q1_report_draft.pdf", "application/pdf", 842_113, None, None))
mail("dentist", DENTAL, "Appointment reminder: Tuesday, March 10", """
Hello Sam,

This is a reminder of your check-up with Dr. Walsh on Tuesday, March 10 at 08:15.
Please arrive 10 minutes early. To reschedule, call (206) 555-0190.

Riverbend Dental""", ago(days=5))
mail("recipe", HANNAH, "The lentil soup recipe", """
Hi Sam, here it is as promised:

- 250 g red lentils
- 1 onion, 2 carrots, 2 cloves of garlic
- 1 tsp cumin, 1 tsp paprika
- 1.2 l vegetable stock
- juice of half a lemon

Simmer everything for 25 minutes, then blend. Enjoy!
Hannah""", ago(days=5, hours=6))
mail("interview", OLGA, "Interview schedule for the analyst role", """
Hi Sam,

The candidates are booked as follows (all in Room 3C):
  Monday, March 9, 10:00 - Priya Raman
  Monday, March 9, 13:30 - Jonas Berg
  Tuesday, March 10, 11:00 - Amara Diallo

Could you take the Tuesday slot?

Olga""", ago(days=6, hours=1))
mail("invoice", JIN, "Invoice INV-2291", """
Dear Sam,

Please find attached invoice INV-2291 for the February consulting work: ¥128,000,
due March 31, 2026.

Best regards,
Jin Okafor, Fabrikam""", ago(days=6, hours=7))
attachments.append(("invoice", "INV-2291.pdf", "application/pdf", 156_402, None, None))
mail("bookclub", INGRID, "Book club: next pick", """
Hi all,

Next month we're reading "The Left Hand of Darkness". We meet at my place on Thursday,
March 26 at 19:00. Bring snacks!

Ingrid""", ago(days=7), cc="hannah.sokol@example.com, beatriz.kuznetsov@example.org")
mail("code", SECURITY, "Your verification code", """
Your Fabrikam verification code is 482915. It expires in 10 minutes.
If you didn't ask for it, you can ignore this mail.""", ago(hours=1, minutes=20), read=0)
mail("party", BEATRIZ, "Birthday party for Leo", """
Hi Sam!

Leo turns six on Saturday, March 21. We're having a party at our place (12 Alder Lane) from
15:00 to 18:00. Let me know if you can make it!

Beatriz""", ago(days=8, hours=2))
mail("delay", BENJAMIN, "Shipment delayed", """
Hello Sam,

The pallet of office chairs (PO 7731) is delayed at customs. New delivery date: March 13.
Sorry for the trouble.

Benjamin Chowdhury, Northwind Traders""", ago(days=8, hours=5))
mail("library", LIBRARY, "Your hold is ready for pickup", """
The item you reserved, "Project Hail Mary", is ready at the Central Library front desk.
Please pick it up by March 9.""", ago(days=9))
mail("callmoved", HASSAN, "Conference call moved to 16:30", """
Hi Sam,

Today's supplier call is moved from 15:00 to 16:30 (same link). Hope that still works.

Hassan""", ago(minutes=40), read=0)
mail("late", KAVYA, "Running late", """
Hi Sam, my train is delayed. Can we meet at 10:30 instead of 10:00? Same cafe.

Kavya""", later(45), read=0, arrives=later(45))
mail("concert", FELIX, "Concert tickets", """
Got us two tickets for the symphony on Friday, March 13 at 20:00! Row F, seats 11 and 12.
You owe me $48.

Felix""", later(240), read=0, arrives=later(240))
mail("gym", GYM, "Your membership renews soon", """
Hi Sam, your Pulse Fitness membership renews on March 15 for $39.00 a month.
Manage it at pulsefitness.example.com/account.""", ago(days=10))
mail("elena", ELENA, "Slides for Monday", """
Hi Sam, could you send me the slides from last week's review? I'd like to reuse two charts.
Thanks, Elena""", ago(days=10, hours=3))
mail("elena2", ME, "Re: Slides for Monday", """
Sure, they're attached.

Sam""", ago(days=10, hours=1), folder="sent", to=ELENA[1], thread="elena")
attachments.append(("elena2", "Review_slides.pdf", "application/pdf", 2_304_511, None, None))
mail("sakura", SAKURA, "Kyoto recommendations", """
Hi Sam!

For your trip: stay near Sanjo, visit Fushimi Inari before 8:00 to avoid crowds, and try the
tofu at Shoraian. A night at a ryokan is about ¥30,000.

Sakura""", ago(days=12))
mail("weekly2", NEWS, "The Weekly Byte: the quiet keyboard", """
This week: a keyboard you can barely hear, the best note apps compared, and why your phone
gets warm. Read online at weeklybyte.example.com/issue/211.""", ago(days=8, hours=6))
mail("mateo", MATEO, "Bike for sale", """
Hey Sam, you asked about my old road bike: I'd let it go for €350. It's in the garage if you
want to try it this weekend.

Mateo""", ago(days=13), folder="archive")
mail("weekly3", NEWS, "The Weekly Byte: foldables, again", """
This week: three new foldables, a solar charger that works, and privacy settings to check today.""",
     ago(days=15, hours=6), folder="archive")
mail("spam", ("Prize Center", "winner@prizes.example.net"), "You have won!!!", """
Claim your prize now by sending your bank details.""", ago(days=2, hours=9), folder="trash")
mail("draft", ME, "Team lunch", """
Hi team, how about lunch on Friday at""", ago(days=1, hours=2), folder="drafts",
     to="lucia.fernandez@relecloud.example.com")
mail("sent1", ME, "Thank you!", """
Thanks for the lovely evening, Naomi. Next time is on me.

Sam""", ago(days=14), folder="sent", to=NAOMI[1])

ids = {m["key"]: i + 1 for i, m in enumerate(mails)}
out = ["-- Generated by tools/gen_email_seed.py: edit the script, not this file.", ""]
out.append("INSERT INTO mails (id, folder, thread_id, from_name, from_addr, to_addrs, cc_addrs, subject, body, sent_at, read, starred, arrives_at) VALUES")
rows = []
for m in mails:
    name, addr = m["frm"]
    rows.append("  (%d, %s, %d, %s, %s, %s, %s, %s, %s, %d, %d, %d, %s)" % (
        ids[m["key"]], q(m["folder"]), ids[m["thread"]], q(name), q(addr), q(m["to"]), q(m["cc"]),
        q(m["subject"]), q(m["body"]), m["at"], m["read"], m["starred"],
        str(m["arrives"]) if m["arrives"] else "NULL"))
out.append(",\n".join(rows) + ";")
out.append("")
out.append("INSERT INTO attachments (mail_id, name, mime, size, image, body) VALUES")
out.append(",\n".join("  (%d, %s, %s, %d, %s, %s)" % (ids[k], q(n), q(mt), sz, q(img) if img else "NULL",
                                                         q(b) if b else "NULL")
                      for k, n, mt, sz, img, b in attachments) + ";")
open("apps/email/seed.sql", "w").write("\n".join(out) + "\n")
print(len(mails), "mails,", len(attachments), "attachments")
