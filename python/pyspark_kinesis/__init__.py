"""Amazon Kinesis Data Streams source and sink for PySpark Structured Streaming.

The connector itself is a JVM data source registered as ``kinesis``; this package ships its jar and puts it on a
Spark session with :func:`configure_spark`.
"""

from pyspark_kinesis._jar import SCALA_BINARY_VERSION, ConnectorJarError, configure_spark, connector_jar

__all__ = ["SCALA_BINARY_VERSION", "ConnectorJarError", "configure_spark", "connector_jar"]
