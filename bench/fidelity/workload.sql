-- workload.sql -- the sqlite3 workload of bench/fidelity.sh: bulk inserts,
-- indexes, joins, aggregates, updates and deletes on an in-memory database.
-- @n (rows of the order table) is set by the bench; statements inserting
-- one row at a time follow this file.
CREATE TABLE customer(id INTEGER PRIMARY KEY, name TEXT, city TEXT, score REAL);
CREATE TABLE orders(id INTEGER PRIMARY KEY, cust INTEGER, item TEXT, qty INTEGER, price REAL);
CREATE TABLE note(id INTEGER PRIMARY KEY, cust INTEGER, body TEXT);
WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < @n / 10)
INSERT INTO customer SELECT i, 'name' || i, 'city' || (i % 97), (i * 37 % 1000) / 10.0 FROM c;
WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < @n)
INSERT INTO orders SELECT i, (i * 7919) % (@n / 10) + 1, 'item' || (i % 503), i % 10 + 1,
  (i % 997) / 7.0 FROM c;
CREATE INDEX orders_cust ON orders(cust);
CREATE INDEX orders_item ON orders(item, qty);
CREATE INDEX customer_city ON customer(city);
SELECT c.city, count(*), round(sum(o.qty * o.price), 2) FROM customer c JOIN orders o ON o.cust = c.id
  GROUP BY c.city ORDER BY 3 DESC LIMIT 3;
SELECT item, round(avg(qty), 3), max(price) FROM orders GROUP BY item ORDER BY 2 DESC LIMIT 3;
SELECT count(*) FROM orders o WHERE EXISTS
  (SELECT 1 FROM customer c WHERE c.id = o.cust AND c.score > 50.0);
SELECT name, total FROM (SELECT c.name, sum(o.qty) AS total FROM customer c
  JOIN orders o ON o.cust = c.id WHERE c.city LIKE 'city1%' GROUP BY c.id) ORDER BY total DESC LIMIT 3;
UPDATE orders SET qty = qty + 1 WHERE id % 3 = 0;
DELETE FROM orders WHERE id % 11 = 0;
SELECT substr(upper(name), 1, 6) AS k, count(*) FROM customer GROUP BY k ORDER BY 2 DESC LIMIT 3;
SELECT count(DISTINCT cust), min(price), max(qty) FROM orders;
