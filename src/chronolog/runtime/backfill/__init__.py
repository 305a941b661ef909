"""Backfill and replay (CONTRACT §5): re-evaluate a span of history, emit corrections.

One pipeline for every dialect, through its registry row and its ``Evaluator`` only:

* ``segments`` — the split of an answer span into time segments with a warm-up
  that makes each exact (the row's ``Reach``), the events each segment (and key
  partition) needs, and the replay of one segment through a fresh evaluator,
  its answer changes summed into their meaning.
* ``meaning`` — that meaning per atom as intervals, the corrections that bring
  a published stream to it, and the dialect's time domain: integer points
  (LARS) or rational intervals (DatalogMTL, RTEC).
* ``points`` — LARS answer lines (CONTRACT §3) as points, and corrections as
  ``diff`` lines with consecutive points merged.
* ``job`` — the PySpark job: read history and published answers (JSONL, the
  Parquet archive or Kafka), replay the segments in Spark tasks, compare,
  emit the corrections.
* ``spark_io`` — sources, the Spark session, the raw lines and the job's report.
* ``archive`` — the archiver writing Kafka topics to partitioned Parquet.
* ``kafka_source`` — a Spark Python data source reading a Kafka topic with
  confluent-kafka (the Spark Kafka connector jar is not needed).
"""
