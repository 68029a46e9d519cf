package io.lossprobe.udp;

import io.netty.channel.DefaultSelectStrategyFactory;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.epoll.Epoll;
import io.netty.channel.epoll.EpollDatagramChannel;
import io.netty.channel.epoll.EpollIoHandler;
import io.netty.channel.SelectStrategyFactory;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.DatagramChannel;
import io.netty.channel.socket.nio.NioDatagramChannel;
import io.netty.util.concurrent.DefaultThreadFactory;
import java.util.Locale;

/** Native epoll where it is available (sendmmsg/recvmmsg), plain NIO otherwise or when asked. */
enum NettyIo {
    EPOLL, NIO;

    /** {@code auto} picks epoll when Netty's native library loads. */
    static NettyIo choose(String option) {
        String o = option == null ? "auto" : option.toLowerCase(Locale.ROOT);
        return switch (o) {
            case "epoll" -> {
                if (!Epoll.isAvailable()) {
                    throw new IllegalStateException("native epoll is not available: " + Epoll.unavailabilityCause());
                }
                yield EPOLL;
            }
            case "nio" -> NIO;
            case "auto" -> Epoll.isAvailable() ? EPOLL : NIO;
            default -> throw new IllegalArgumentException("udp.io must be auto, epoll or nio, not '" + option + "'");
        };
    }

    EventLoopGroup newGroup(String threadName) {
        return newGroup(threadName, 1);
    }

    EventLoopGroup newGroup(String threadName, int threads) {
        return newGroup(threadName, threads, null);
    }

    /**
     * @param busyPoll while it is on, the loops never sleep: each turn looks at the sockets without waiting
     *                 (epoll_wait, or NIO's selectNow, with a zero timeout) and runs what is due, so a datagram is
     *                 read, and a scheduled task runs, within a turn instead of after a wake-up (the precision
     *                 timing mode; each loop then takes a core); null: always the default, sleeping loops
     */
    EventLoopGroup newGroup(String threadName, int threads, BusyPoll busyPoll) {
        DefaultThreadFactory factory = new DefaultThreadFactory(threadName, true);
        SelectStrategyFactory strategy = busyPoll == null ? DefaultSelectStrategyFactory.INSTANCE : () -> busyPoll;
        return new MultiThreadIoEventLoopGroup(threads, factory, this == EPOLL
            ? EpollIoHandler.newFactory(0, strategy)
            : NioIoHandler.newFactory(java.nio.channels.spi.SelectorProvider.provider(), strategy));
    }

    Class<? extends DatagramChannel> datagramChannel() {
        return this == EPOLL ? EpollDatagramChannel.class : NioDatagramChannel.class;
    }
}
