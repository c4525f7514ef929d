-- Food delivery (after DoorDash): stores and menus, a cart, checkout settings, orders that move
-- through their statuses over time. Money is in cents.
CREATE TABLE stores (
  id INTEGER PRIMARY KEY,
  name TEXT NOT NULL,
  cuisine TEXT NOT NULL,
  address TEXT NOT NULL,
  rating REAL NOT NULL,
  reviews INTEGER NOT NULL,
  delivery_fee_cents INTEGER NOT NULL,
  eta_min INTEGER NOT NULL,
  eta_max INTEGER NOT NULL,
  dashpass INTEGER NOT NULL DEFAULT 0,
  km REAL NOT NULL,
  price TEXT NOT NULL DEFAULT '$$',
  saved INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE items (
  id INTEGER PRIMARY KEY,
  store_id INTEGER NOT NULL REFERENCES stores(id),
  section TEXT NOT NULL,
  name TEXT NOT NULL,
  description TEXT NOT NULL DEFAULT '',
  price_cents INTEGER NOT NULL,
  popular INTEGER NOT NULL DEFAULT 0,
  sort INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE option_groups (
  id INTEGER PRIMARY KEY,
  item_id INTEGER NOT NULL REFERENCES items(id),
  name TEXT NOT NULL,
  kind TEXT NOT NULL,              -- one (pick exactly one) or many (optional add-ons)
  sort INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE options (
  id INTEGER PRIMARY KEY,
  group_id INTEGER NOT NULL REFERENCES option_groups(id),
  name TEXT NOT NULL,
  price_cents INTEGER NOT NULL DEFAULT 0,
  sort INTEGER NOT NULL DEFAULT 0
);
-- The choices on the item screen being edited (one item at a time).
CREATE TABLE draft_options (
  option_id INTEGER PRIMARY KEY
);
CREATE TABLE cart (
  id INTEGER PRIMARY KEY,
  store_id INTEGER NOT NULL,
  item_id INTEGER NOT NULL,
  qty INTEGER NOT NULL CHECK (qty > 0),
  options_text TEXT NOT NULL DEFAULT '',
  unit_cents INTEGER NOT NULL,
  instructions TEXT NOT NULL DEFAULT '',
  added_at INTEGER NOT NULL
);
CREATE TABLE addresses (
  id INTEGER PRIMARY KEY,
  label TEXT NOT NULL DEFAULT '',
  street TEXT NOT NULL,
  apt TEXT NOT NULL DEFAULT '',
  instructions TEXT NOT NULL DEFAULT ''
);
CREATE TABLE payments (
  id INTEGER PRIMARY KEY,
  label TEXT NOT NULL
);
CREATE TABLE promos (
  code TEXT PRIMARY KEY,
  description TEXT NOT NULL,
  kind TEXT NOT NULL,              -- percent, amount, free_delivery
  value INTEGER NOT NULL,          -- percent or cents
  min_cents INTEGER NOT NULL DEFAULT 0,
  store_id INTEGER,                -- NULL: any store
  active INTEGER NOT NULL DEFAULT 1
);
-- Checkout choices (one row): where, how much tip, which promo, how to pay.
CREATE TABLE checkout (
  id INTEGER PRIMARY KEY CHECK (id = 1),
  address_id INTEGER NOT NULL,
  payment_id INTEGER NOT NULL,
  tip_pct INTEGER NOT NULL DEFAULT 15,
  tip_custom_cents INTEGER,        -- set by "Other": a fixed tip
  promo_code TEXT NOT NULL DEFAULT '',
  dropoff TEXT NOT NULL DEFAULT 'door'   -- door (leave at door) or hand (hand it to me)
);
CREATE TABLE orders (
  id INTEGER PRIMARY KEY,
  store_id INTEGER NOT NULL,
  placed_at INTEGER NOT NULL,
  status TEXT NOT NULL,            -- placed, preparing, picked_up, delivered, cancelled
  address TEXT NOT NULL,
  subtotal_cents INTEGER NOT NULL,
  delivery_fee_cents INTEGER NOT NULL,
  service_fee_cents INTEGER NOT NULL,
  tip_cents INTEGER NOT NULL,
  discount_cents INTEGER NOT NULL DEFAULT 0,
  total_cents INTEGER NOT NULL,
  promo_code TEXT NOT NULL DEFAULT '',
  payment_label TEXT NOT NULL,
  dropoff TEXT NOT NULL DEFAULT 'door',
  dasher TEXT NOT NULL DEFAULT '',
  delivered_at INTEGER
);
CREATE TABLE order_items (
  id INTEGER PRIMARY KEY,
  order_id INTEGER NOT NULL REFERENCES orders(id),
  item_id INTEGER NOT NULL,
  name TEXT NOT NULL,
  qty INTEGER NOT NULL,
  options_text TEXT NOT NULL DEFAULT '',
  unit_cents INTEGER NOT NULL
);
-- What the cart costs with the checkout choices: every screen and the order use this.
CREATE VIEW cart_totals AS
WITH sub AS (SELECT coalesce(sum(qty * unit_cents), 0) AS s, max(store_id) AS sid, coalesce(sum(qty), 0) AS n FROM cart),
     ch AS (SELECT * FROM checkout WHERE id = 1),
     st AS (SELECT delivery_fee_cents AS fee FROM stores WHERE id = (SELECT sid FROM sub)),
     pr AS (SELECT p.* FROM promos p, ch WHERE p.code = ch.promo_code AND p.active = 1 AND (p.store_id IS NULL OR p.store_id = (SELECT sid FROM sub)))
SELECT sub.sid AS store_id, sub.n AS item_count, sub.s AS subtotal,
  coalesce((SELECT fee FROM st), 0) AS delivery_fee,
  CASE WHEN sub.s = 0 THEN 0 ELSE max(199, (sub.s + 5) / 10) END AS service_fee,
  (SELECT coalesce(tip_custom_cents, (sub.s * tip_pct + 50) / 100) FROM ch) AS tip,
  coalesce((SELECT CASE WHEN sub.s < pr.min_cents THEN 0
      WHEN pr.kind = 'percent' THEN (sub.s * pr.value + 50) / 100
      WHEN pr.kind = 'amount' THEN min(pr.value, sub.s)
      ELSE coalesce((SELECT fee FROM st), 0) END FROM pr), 0) AS discount,
  (SELECT promo_code FROM ch) AS promo_code
FROM sub;
