-- Shopping (after the Amazon Shopping app): a read-only catalog with mutable stock, reviews,
-- the cart, the wish list, saved addresses and payment methods, promo codes, the checkout in
-- progress (one row), and orders whose status moves with virtual time.

CREATE TABLE products (
  id INTEGER PRIMARY KEY,
  title TEXT NOT NULL,
  brand TEXT NOT NULL,
  category TEXT NOT NULL,
  price REAL NOT NULL,                    -- USD
  list_price REAL NOT NULL,               -- "List:" price (a deal when above price)
  rating REAL NOT NULL,                   -- average stars, one decimal
  reviews_count INTEGER NOT NULL,         -- global ratings
  colors TEXT NOT NULL DEFAULT '',        -- comma-separated ('' = none to choose)
  sizes TEXT NOT NULL DEFAULT '',         -- comma-separated ('' = none to choose); Books: formats
  stock INTEGER NOT NULL DEFAULT 0,       -- 0 = currently unavailable
  image TEXT NOT NULL,                    -- placeholder:KEY
  description TEXT NOT NULL DEFAULT '',
  prime INTEGER NOT NULL DEFAULT 1
);
CREATE INDEX products_category ON products(category);

CREATE TABLE reviews (
  id INTEGER PRIMARY KEY,
  product_id INTEGER NOT NULL REFERENCES products(id),
  author TEXT NOT NULL,
  stars INTEGER NOT NULL,
  title TEXT NOT NULL,
  body TEXT NOT NULL,
  date TEXT NOT NULL,                     -- YYYY-MM-DD
  helpful INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX reviews_product ON reviews(product_id);

CREATE TABLE cart_items (
  id INTEGER PRIMARY KEY,
  product_id INTEGER NOT NULL REFERENCES products(id),
  color TEXT NOT NULL DEFAULT '',
  size TEXT NOT NULL DEFAULT '',
  qty INTEGER NOT NULL DEFAULT 1 CHECK (qty >= 1),
  added_at INTEGER NOT NULL,
  UNIQUE (product_id, color, size)
);

CREATE TABLE wishlist (
  id INTEGER PRIMARY KEY,
  product_id INTEGER NOT NULL UNIQUE REFERENCES products(id),
  added_at INTEGER NOT NULL
);

CREATE TABLE addresses (
  id INTEGER PRIMARY KEY,
  label TEXT NOT NULL DEFAULT '',         -- Home, Work, ...
  full_name TEXT NOT NULL,
  line1 TEXT NOT NULL,
  city TEXT NOT NULL,
  state TEXT NOT NULL,
  zip TEXT NOT NULL,
  phone TEXT NOT NULL DEFAULT '',
  is_default INTEGER NOT NULL DEFAULT 0
);

CREATE TABLE payments (
  id INTEGER PRIMARY KEY,
  label TEXT NOT NULL,                    -- "Visa ending in 4417"
  expires TEXT NOT NULL DEFAULT '',       -- MM/YY
  is_default INTEGER NOT NULL DEFAULT 0
);

CREATE TABLE promos (
  code TEXT PRIMARY KEY,                  -- upper case
  kind TEXT NOT NULL CHECK (kind IN ('percent', 'amount', 'freeship')),
  value REAL NOT NULL DEFAULT 0,
  min_subtotal REAL NOT NULL DEFAULT 0,
  expires TEXT NOT NULL,                  -- last valid day, YYYY-MM-DD
  description TEXT NOT NULL DEFAULT ''
);

-- The checkout in progress (always one row, reset when the user proceeds to checkout).
CREATE TABLE checkout (
  id INTEGER PRIMARY KEY CHECK (id = 1),
  address_id INTEGER,
  payment_id INTEGER,
  delivery TEXT NOT NULL DEFAULT 'standard' CHECK (delivery IN ('standard', 'two_day', 'one_day')),
  promo_code TEXT NOT NULL DEFAULT ''     -- applied (validated) code, '' = none
);

CREATE TABLE orders (
  id INTEGER PRIMARY KEY,
  number TEXT NOT NULL UNIQUE,            -- 113-1234567-1234567
  placed_at INTEGER NOT NULL,
  status TEXT NOT NULL CHECK (status IN ('ordered', 'shipped', 'out_for_delivery', 'delivered', 'cancelled', 'return_requested')),
  address_id INTEGER NOT NULL REFERENCES addresses(id),
  payment_id INTEGER NOT NULL REFERENCES payments(id),
  delivery TEXT NOT NULL DEFAULT 'standard',
  delivery_date TEXT NOT NULL,            -- promised/actual day, YYYY-MM-DD
  ship_at INTEGER NOT NULL,               -- when each stage happens (ms)
  out_at INTEGER NOT NULL,
  deliver_at INTEGER NOT NULL,
  subtotal REAL NOT NULL,
  shipping REAL NOT NULL DEFAULT 0,
  discount REAL NOT NULL DEFAULT 0,
  total REAL NOT NULL,
  promo_code TEXT NOT NULL DEFAULT '',
  carrier TEXT NOT NULL DEFAULT 'Amazon',
  tracking TEXT NOT NULL DEFAULT '',
  cancelled_at INTEGER,
  return_reason TEXT NOT NULL DEFAULT '',
  returned_at INTEGER
);

CREATE TABLE order_items (
  id INTEGER PRIMARY KEY,
  order_id INTEGER NOT NULL REFERENCES orders(id),
  product_id INTEGER NOT NULL REFERENCES products(id),
  title TEXT NOT NULL,
  color TEXT NOT NULL DEFAULT '',
  size TEXT NOT NULL DEFAULT '',
  qty INTEGER NOT NULL DEFAULT 1,
  price REAL NOT NULL
);
CREATE INDEX order_items_order ON order_items(order_id);

-- What the cart and the checkout show: subtotal, item count, shipping, promotion and total.
CREATE VIEW checkout_summary AS
WITH s AS (SELECT coalesce(round(sum(c.qty * p.price), 2), 0) AS subtotal, coalesce(sum(c.qty), 0) AS items
           FROM cart_items c JOIN products p ON p.id = c.product_id),
     k AS (SELECT * FROM checkout WHERE id = 1),
     pr AS (SELECT promos.* FROM promos, k WHERE promos.code = upper(k.promo_code))
SELECT subtotal, items, delivery, promo_code, shipping, discount,
       round(subtotal + shipping - discount, 2) AS total
FROM (
  SELECT s.subtotal, s.items, k.delivery, k.promo_code,
    CASE WHEN (SELECT kind FROM pr) = 'freeship' THEN 0
         WHEN k.delivery = 'standard' THEN (CASE WHEN s.subtotal >= 35 THEN 0 ELSE 5.99 END)
         WHEN k.delivery = 'two_day' THEN 7.99 ELSE 12.99 END AS shipping,
    round(CASE (SELECT kind FROM pr) WHEN 'percent' THEN s.subtotal * (SELECT value FROM pr) / 100
         WHEN 'amount' THEN min(s.subtotal, (SELECT value FROM pr)) ELSE 0 END, 2) AS discount
  FROM s, k
);
