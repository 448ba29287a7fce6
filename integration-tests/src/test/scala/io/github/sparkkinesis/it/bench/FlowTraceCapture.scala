package io.github.sparkkinesis.it.bench

import java.util.concurrent.ConcurrentLinkedQueue

import scala.jdk.CollectionConverters._

import org.apache.logging.log4j.{Level, LogManager}
import org.apache.logging.log4j.core.{LogEvent, LoggerContext}
import org.apache.logging.log4j.core.appender.AbstractAppender
import org.apache.logging.log4j.core.config.{LoggerConfig, Property}

/** One sink response as the connector's `FlowTrace` logger reports it. */
final case class FlowTraceLine(epochMillis: Long, task: Int, records: Int, throttled: Int, batch: Int, pauseMs: Long)

object FlowTraceLine {
  private val Field = """(\w+)=(\S+)""".r

  def parse(line: String): Option[FlowTraceLine] = {
    val f = Field.findAllMatchIn(line).map(m => m.group(1) -> m.group(2)).toMap
    for (t <- f.get("t"); task <- f.get("task"); records <- f.get("records"); throttled <- f.get("throttled");
         batch <- f.get("batch"); pause <- f.get("pauseMs"))
      yield FlowTraceLine(t.toLong, task.toInt, records.toInt, throttled.toInt, batch.toInt, pause.toLong)
  }
}

/**
 * Collects the sink's per-response trace lines in this JVM (local-mode executors included) while installed, by
 * turning the `io.github.sparkkinesis.sink.FlowTrace` logger to DEBUG with an in-memory appender.
 */
final class FlowTraceCapture extends AutoCloseable {
  private val loggerName = "io.github.sparkkinesis.sink.FlowTrace"
  private val lines = new ConcurrentLinkedQueue[String]()
  private val context = LogManager.getContext(false).asInstanceOf[LoggerContext]
  private val appender = new AbstractAppender("flow-trace-capture", null, null, true, Property.EMPTY_ARRAY) {
    override def append(event: LogEvent): Unit = lines.add(event.getMessage.getFormattedMessage)
  }
  appender.start()
  context.getConfiguration.addAppender(appender)
  private val loggerConfig = new LoggerConfig(loggerName, Level.DEBUG, false)
  loggerConfig.addAppender(appender, Level.DEBUG, null)
  context.getConfiguration.addLogger(loggerName, loggerConfig)
  context.updateLoggers()

  def drain(): Seq[FlowTraceLine] = {
    val taken = Iterator.continually(lines.poll()).takeWhile(_ != null).toVector
    taken.flatMap(FlowTraceLine.parse)
  }

  override def close(): Unit = {
    context.getConfiguration.removeLogger(loggerName)
    context.updateLoggers()
    appender.stop()
  }
}
