-- Clock seed (hand-written: a handful of alarms as people keep them, and the world's cities).
-- Days: 1 Sun, 2 Mon, 4 Tue, 8 Wed, 16 Thu, 32 Fri, 64 Sat.
INSERT INTO alarms (hour, minute, label, days, enabled, vibrate, ringtone) VALUES
  (6, 30, 'Wake up', 62, 1, 1, 'Cesium'),
  (7, 45, 'Gym', 65, 0, 1, 'Argon'),
  (13, 0, 'Take medication', 127, 1, 0, 'Beep-Beep'),
  (8, 15, '', 0, 0, 1, 'Cesium'),
  (22, 30, 'Bedtime', 31, 0, 0, 'Osmium'),
  (17, 50, 'Pick up Lena from school', 42, 1, 1, 'Fresh start');

INSERT INTO stopwatch (id, started_at, accumulated_ms) VALUES (1, NULL, 0);

INSERT INTO cities (name, country, zone) VALUES
  ('Amsterdam', 'Netherlands', 'Europe/Amsterdam'),
  ('Athens', 'Greece', 'Europe/Athens'),
  ('Auckland', 'New Zealand', 'Pacific/Auckland'),
  ('Bangkok', 'Thailand', 'Asia/Bangkok'),
  ('Barcelona', 'Spain', 'Europe/Madrid'),
  ('Beijing', 'China', 'Asia/Shanghai'),
  ('Berlin', 'Germany', 'Europe/Berlin'),
  ('Bogotá', 'Colombia', 'America/Bogota'),
  ('Buenos Aires', 'Argentina', 'America/Argentina/Buenos_Aires'),
  ('Cairo', 'Egypt', 'Africa/Cairo'),
  ('Cape Town', 'South Africa', 'Africa/Johannesburg'),
  ('Chicago', 'United States', 'America/Chicago'),
  ('Denver', 'United States', 'America/Denver'),
  ('Dubai', 'United Arab Emirates', 'Asia/Dubai'),
  ('Dublin', 'Ireland', 'Europe/Dublin'),
  ('Hong Kong', 'China', 'Asia/Hong_Kong'),
  ('Honolulu', 'United States', 'Pacific/Honolulu'),
  ('Istanbul', 'Türkiye', 'Europe/Istanbul'),
  ('Jakarta', 'Indonesia', 'Asia/Jakarta'),
  ('Johannesburg', 'South Africa', 'Africa/Johannesburg'),
  ('Kolkata', 'India', 'Asia/Kolkata'),
  ('Lagos', 'Nigeria', 'Africa/Lagos'),
  ('Lima', 'Peru', 'America/Lima'),
  ('Lisbon', 'Portugal', 'Europe/Lisbon'),
  ('London', 'United Kingdom', 'Europe/London'),
  ('Los Angeles', 'United States', 'America/Los_Angeles'),
  ('Madrid', 'Spain', 'Europe/Madrid'),
  ('Melbourne', 'Australia', 'Australia/Melbourne'),
  ('Mexico City', 'Mexico', 'America/Mexico_City'),
  ('Moscow', 'Russia', 'Europe/Moscow'),
  ('Mumbai', 'India', 'Asia/Kolkata'),
  ('Nairobi', 'Kenya', 'Africa/Nairobi'),
  ('New York', 'United States', 'America/New_York'),
  ('Paris', 'France', 'Europe/Paris'),
  ('Reykjavík', 'Iceland', 'Atlantic/Reykjavik'),
  ('Rome', 'Italy', 'Europe/Rome'),
  ('São Paulo', 'Brazil', 'America/Sao_Paulo'),
  ('San Francisco', 'United States', 'America/Los_Angeles'),
  ('Santiago', 'Chile', 'America/Santiago'),
  ('Seoul', 'South Korea', 'Asia/Seoul'),
  ('Singapore', 'Singapore', 'Asia/Singapore'),
  ('Stockholm', 'Sweden', 'Europe/Stockholm'),
  ('Sydney', 'Australia', 'Australia/Sydney'),
  ('Taipei', 'Taiwan', 'Asia/Taipei'),
  ('Tokyo', 'Japan', 'Asia/Tokyo'),
  ('Toronto', 'Canada', 'America/Toronto'),
  ('Vancouver', 'Canada', 'America/Vancouver'),
  ('Vienna', 'Austria', 'Europe/Vienna'),
  ('Warsaw', 'Poland', 'Europe/Warsaw'),
  ('Zürich', 'Switzerland', 'Europe/Zurich');

INSERT INTO world_clocks (city_id, added_at)
  SELECT id, 1770000000000 + rowid FROM cities WHERE name IN ('London', 'New York', 'Tokyo')
  ORDER BY CASE name WHEN 'London' THEN 1 WHEN 'New York' THEN 2 ELSE 3 END;
