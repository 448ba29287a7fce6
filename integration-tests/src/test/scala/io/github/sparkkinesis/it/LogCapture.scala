package io.github.sparkkinesis.it

import java.io.{PrintWriter, StringWriter}
import java.util.concurrent.ConcurrentLinkedQueue

import scala.jdk.CollectionConverters._

import org.apache.logging.log4j.{Level, LogManager}
import org.apache.logging.log4j.core.{LogEvent, LoggerContext}
import org.apache.logging.log4j.core.appender.AbstractAppender
import org.apache.logging.log4j.core.config.{Configurator, Property}

/**
 * Everything logged in this JVM (the driver and, in local mode, the executors) while installed: INFO and up from
 * everyone, DEBUG from the connector's own classes, each with its exception's full trace.
 */
final class LogCapture private () extends AbstractAppender("log-capture", null, null, true, Property.EMPTY_ARRAY) {
  private val lines = new ConcurrentLinkedQueue[String]()

  override def append(event: LogEvent): Unit = {
    lines.add(s"${event.getLevel} ${event.getLoggerName}: ${event.getMessage.getFormattedMessage}")
    Option(event.getThrown).foreach(t => lines.add(LogCapture.trace(t)))
  }

  def text: String = lines.asScala.mkString("\n")
  def size: Int = lines.size

  def uninstall(): Unit = {
    LogCapture.context.getConfiguration.getRootLogger.removeAppender(getName)
    LogCapture.context.updateLoggers()
    stop()
  }
}

object LogCapture {
  private def context = LogManager.getContext(false).asInstanceOf[LoggerContext]

  def install(): LogCapture = {
    val capture = new LogCapture()
    capture.start()
    Configurator.setLevel("io.github.sparkkinesis", Level.DEBUG)
    Configurator.setLevel("io.github.sparkkinesis.shaded", Level.INFO)
    context.getConfiguration.getRootLogger.addAppender(capture, Level.ALL, null)
    context.updateLoggers()
    capture
  }

  /** A throwable as a log shows it: messages of every cause and suppressed exception. */
  def trace(t: Throwable): String = {
    val out = new StringWriter()
    t.printStackTrace(new PrintWriter(out))
    out.toString
  }
}
