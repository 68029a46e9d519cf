package io.lossprobe.netty;

import io.netty.channel.DefaultSelectStrategyFactory;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.SelectStrategy;
import io.netty.channel.SelectStrategyFactory;
import io.netty.channel.ServerChannel;
import io.netty.channel.epoll.Epoll;
import io.netty.channel.epoll.EpollDatagramChannel;
import io.netty.channel.epoll.EpollIoHandler;
import io.netty.channel.epoll.EpollServerSocketChannel;
import io.netty.channel.epoll.EpollSocketChannel;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.DatagramChannel;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioDatagramChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.channel.socket.nio.NioSocketChannel;
import io.netty.util.concurrent.DefaultThreadFactory;
import java.nio.channels.spi.SelectorProvider;
import java.util.Locale;

/**
 * Netty's native epoll where it is available (sendmmsg/recvmmsg for UDP, TCP_INFO for TCP), plain NIO otherwise or
 * when asked: the event loops and channel classes of the choice. Shared by udp-probe and tcp-probe.
 */
public enum NettyIo {
    EPOLL, NIO;

    /**
     * The key a transport reports this choice under in a run's environment (value 1): {@code io.epoll} or
     * {@code io.nio}.
     */
    public String environmentKey() {
        return "io." + name().toLowerCase(Locale.ROOT);
    }

    /**
     * {@code auto} (or null) picks epoll when Netty's native library loads.
     *
     * @param option the option's name, for the message when {@code value} is none of auto, epoll and nio
     */
    public static NettyIo choose(String option, String value) {
        String o = value == null ? "auto" : value.toLowerCase(Locale.ROOT);
        return switch (o) {
            case "epoll" -> {
                if (!Epoll.isAvailable()) {
                    throw new IllegalStateException("native epoll is not available: " + Epoll.unavailabilityCause());
                }
                yield EPOLL;
            }
            case "nio" -> NIO;
            case "auto" -> Epoll.isAvailable() ? EPOLL : NIO;
            default -> throw new IllegalArgumentException(option + " must be auto, epoll or nio, not '" + value
                + "'");
        };
    }

    /** One event loop (daemon threads): channels that share it never need a lock between them. */
    public EventLoopGroup newGroup(String threadName) {
        return newGroup(threadName, 1);
    }

    public EventLoopGroup newGroup(String threadName, int threads) {
        return newGroup(threadName, threads, null);
    }

    /**
     * @param busyPoll how the loops wait: a strategy that never sleeps while it is on makes each turn look at the
     *                 sockets without waiting (epoll_wait, or NIO's selectNow, with a zero timeout) and run what is
     *                 due, so a message is read, and a scheduled task runs, within a turn instead of after a wake-up
     *                 (each loop then takes a core); null: Netty's default, sleeping loops
     */
    public EventLoopGroup newGroup(String threadName, int threads, SelectStrategy busyPoll) {
        DefaultThreadFactory factory = new DefaultThreadFactory(threadName, true);
        SelectStrategyFactory strategy = busyPoll == null ? DefaultSelectStrategyFactory.INSTANCE : () -> busyPoll;
        return new MultiThreadIoEventLoopGroup(threads, factory, this == EPOLL
            ? EpollIoHandler.newFactory(0, strategy)
            : NioIoHandler.newFactory(SelectorProvider.provider(), strategy));
    }

    public Class<? extends DatagramChannel> datagramChannel() {
        return this == EPOLL ? EpollDatagramChannel.class : NioDatagramChannel.class;
    }

    public Class<? extends ServerChannel> serverChannel() {
        return this == EPOLL ? EpollServerSocketChannel.class : NioServerSocketChannel.class;
    }

    public Class<? extends SocketChannel> socketChannel() {
        return this == EPOLL ? EpollSocketChannel.class : NioSocketChannel.class;
    }
}
